//! TCP implementations over one shared core.
