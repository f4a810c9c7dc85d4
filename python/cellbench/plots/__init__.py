"""Figures of stored results (never by re-running), and the results as one HTML page.

``kinds.KINDS`` is the table of figure kinds ``cellbench plot`` draws, one record each
(name, what it draws from and the fit check that refuses data it would misdraw, the
draw function); ``draw.plot(result, kind, output, ...)`` draws one; a file per family
of kinds (``buffers``, ``lines``, ``load``, ``trace``, ``series``, ``capture``,
``port``) over the shared helpers (``figure``, ``pick``, ``published``); ``report``
writes the page (``cellbench report``)."""
