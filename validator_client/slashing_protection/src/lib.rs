//! Slashing protection: refuses to sign double or surround votes and double proposals.
