//! Several Arbor nodes on loopback with scripted faults.
