"""The figure kinds ``cellbench plot`` draws (``plots`` draws them). A module of its
own so that building the command line imports no pandas, numpy or matplotlib."""

KINDS = (
    "buffer-grid",
    "buffer-surface",
    "window",
    "message-size",
    "offered-load",
    "segment-size",
    "measurements",
    "time-sequence",
    "cwnd",
    "queue",
    "acr",
    "iat",
    "port-buffer",
)

#: The figure kinds that draw one stored run (the others draw the whole sweep).
ONE_RUN = ("time-sequence", "cwnd", "queue", "acr")
#: The figure kinds that draw a cell tester's capture (a pcap, or a result's cells/).
CAPTURE = ("iat",)
