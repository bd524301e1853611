//! (Gloas, in progress.)
