//! [`InternalError`]: the cause of a failure kept with its type where one error variant is
//! reached by several error types (a gossip rule's state helper, fork choice, a subnet
//! computation), or where the error or outcome that carries it is `Clone` and `PartialEq`
//! (gossip errors, the light-client server's last error, the outcomes of production and
//! publication) and its cause is not.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

/// A failure's cause, its type erased and shared (a clone shares the cause).
///
/// Transparent: its `Display` is the cause's message and its [`Error::source`] the cause's
/// source, so a report walking the chain of the error that holds it sees the cause and each
/// of its sources once. [`InternalError::downcast_ref`] gets the cause back as its type.
///
/// Two are equal when they share the cause or their messages are the same (the messages these
/// replaced compared so): the cause's type is not compared.
#[derive(Clone)]
pub struct InternalError(Arc<dyn Error + Send + Sync + 'static>);

impl InternalError {
    /// Keeps `error` as the cause.
    ///
    /// A named constructor, not a `From` impl: a blanket `From<E: Error>` would overlap the
    /// reflexive `From<InternalError>`, `InternalError` being an error itself.
    pub fn new<E: Error + Send + Sync + 'static>(error: E) -> Self {
        Self(Arc::new(error))
    }

    /// The cause.
    pub fn get_ref(&self) -> &(dyn Error + Send + Sync + 'static) {
        &*self.0
    }

    /// The cause as a `T`, when it is one.
    pub fn downcast_ref<T: Error + 'static>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl fmt::Display for InternalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for InternalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Error for InternalError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for InternalError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.to_string() == other.to_string()
    }
}

impl Eq for InternalError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("inner")]
    struct Inner;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Inner);

    #[test]
    fn transparent_display_and_source() {
        let e = InternalError::new(Outer(Inner));
        assert_eq!(e.to_string(), "outer");
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("inner")
        );
        assert!(e.downcast_ref::<Outer>().is_some());
        assert!(e.downcast_ref::<Inner>().is_none());
        assert_eq!(format!("{e:?}"), "Outer(Inner)");
    }

    #[test]
    fn equality_by_message() {
        let e = InternalError::new(Inner);
        assert_eq!(e, e.clone());
        assert_eq!(e, InternalError::new(Inner));
        assert_ne!(e, InternalError::new(Outer(Inner)));
    }

    #[test]
    fn kept_as_a_variant_source() {
        #[derive(Debug, thiserror::Error)]
        enum Holder {
            #[error("internal: {0}")]
            Internal(#[source] InternalError),
        }
        let h = Holder::Internal(InternalError::new(Outer(Inner)));
        let chain: Vec<String> = std::iter::successors(Some(&h as &dyn Error), |&e| e.source())
            .map(ToString::to_string)
            .collect();
        assert_eq!(chain, ["internal: outer", "outer", "inner"]);
    }
}
