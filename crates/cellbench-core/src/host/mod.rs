//! Hosts: sockets, applications and processing-cost profiles.
