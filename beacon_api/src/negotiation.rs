//! Content negotiation: which encoding a response is sent in, from the request's `Accept`
//! header, and which encoding a request body is in, from its `Content-Type`.
//!
//! The spec (beacon-node-oapi.yaml, `info.description`): a client that prefers SSZ sends
//! `Accept: application/octet-stream;q=1.0,application/json;q=0.9`; no `Accept` header means
//! JSON; a server that can produce none of the accepted types answers 406, and a body in an
//! unsupported `Content-Type` gets 415. Media ranges and q-values are RFC 9110 §12.5.1's.

/// `application/json`.
pub const JSON_MEDIA_TYPE: &str = "application/json";
/// `application/octet-stream`, the SSZ encoding.
pub const SSZ_MEDIA_TYPE: &str = "application/octet-stream";
/// The `Accept` value of a client that prefers SSZ and takes JSON otherwise.
pub const PREFER_SSZ_ACCEPT: &str = "application/octet-stream;q=1.0,application/json;q=0.9";

/// An encoding of a request or response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `application/json`.
    Json,
    /// `application/octet-stream` (SSZ).
    Ssz,
}

impl Encoding {
    /// The media type to send in `Content-Type`.
    pub const fn media_type(self) -> &'static str {
        match self {
            Self::Json => JSON_MEDIA_TYPE,
            Self::Ssz => SSZ_MEDIA_TYPE,
        }
    }
}

/// Why no encoding could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NegotiationError {
    /// The `Accept` header admits none of the encodings the endpoint offers (answer 406).
    #[error("none of the accepted media types {0:?} can be produced")]
    NotAcceptable(String),
    /// The `Content-Type` is not one the endpoint takes (answer 415).
    #[error("unsupported content type {0:?}")]
    UnsupportedMediaType(String),
}

/// One media range of an `Accept` header with its weight in thousandths (`q=0.9` is 900).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRange<'a> {
    /// `type/subtype`, either part possibly `*`, as written (compare case-insensitively).
    pub media_type: &'a str,
    /// The weight, 0 to 1000; 0 means "not acceptable".
    pub quality: u16,
}

/// Parses a q-value (`0`, `0.5`, `1.000`, at most three decimals) into thousandths.
fn parse_quality(value: &str) -> Option<u16> {
    let (int, frac) = value.split_once('.').unwrap_or((value, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_value = format!("{frac:0<3}").parse::<u16>().ok()?;
    match int {
        "0" => Some(frac_value),
        "1" if frac_value == 0 => Some(1000),
        _ => None,
    }
}

/// Parses an `Accept` header into its media ranges; a range whose parameters do not parse is
/// skipped rather than failing the whole header (it cannot match anything reliably).
pub fn parse_accept(header: &str) -> Vec<MediaRange<'_>> {
    header
        .split(',')
        .filter_map(|part| {
            let mut params = part.split(';');
            let media_type = params.next()?.trim();
            if media_type.is_empty() || !media_type.contains('/') {
                return None;
            }
            let mut quality = 1000;
            for param in params {
                let (name, value) = param.split_once('=')?;
                if name.trim().eq_ignore_ascii_case("q") {
                    quality = parse_quality(value.trim())?;
                }
            }
            Some(MediaRange {
                media_type,
                quality,
            })
        })
        .collect()
}

/// How specifically `range` names `media_type` (2 exact, 1 `type/*`, 0 `*/*`), or `None` if it
/// does not cover it.
fn specificity(range: &str, media_type: &str) -> Option<u8> {
    let (rtype, rsub) = range.split_once('/')?;
    let (mtype, msub) = media_type.split_once('/')?;
    if rtype == "*" && rsub == "*" {
        Some(0)
    } else if rtype.eq_ignore_ascii_case(mtype) && rsub == "*" {
        Some(1)
    } else if rtype.eq_ignore_ascii_case(mtype) && rsub.eq_ignore_ascii_case(msub) {
        Some(2)
    } else {
        None
    }
}

/// The weight `ranges` give `media_type`: that of the most specific range covering it.
fn quality_of(ranges: &[MediaRange<'_>], media_type: &str) -> Option<u16> {
    ranges
        .iter()
        .filter_map(|r| specificity(r.media_type, media_type).map(|s| (s, r.quality)))
        .max_by_key(|(s, _)| *s)
        .map(|(_, q)| q)
}

/// Picks the response encoding for an `Accept` header (absent means JSON) among those the
/// endpoint `offers` (in the server's order of preference, used to break ties).
pub fn negotiate(accept: Option<&str>, offers: &[Encoding]) -> Result<Encoding, NegotiationError> {
    let header = match accept.map(str::trim) {
        None | Some("") => {
            return offers
                .contains(&Encoding::Json)
                .then_some(Encoding::Json)
                .ok_or_else(|| NegotiationError::NotAcceptable(String::new()));
        }
        Some(header) => header,
    };
    let ranges = parse_accept(header);
    let mut best: Option<(u16, Encoding)> = None;
    for &offer in offers {
        match quality_of(&ranges, offer.media_type()) {
            Some(q) if q > 0 && best.is_none_or(|(bq, _)| q > bq) => best = Some((q, offer)),
            _ => {}
        }
    }
    best.map(|(_, encoding)| encoding)
        .ok_or_else(|| NegotiationError::NotAcceptable(header.to_string()))
}

/// The encoding of a request body from its `Content-Type` (absent means JSON); parameters such
/// as `charset` are ignored.
pub fn request_encoding(content_type: Option<&str>) -> Result<Encoding, NegotiationError> {
    let Some(value) = content_type else {
        return Ok(Encoding::Json);
    };
    let media_type = value.split(';').next().unwrap_or_default().trim();
    if media_type.eq_ignore_ascii_case(JSON_MEDIA_TYPE) {
        Ok(Encoding::Json)
    } else if media_type.eq_ignore_ascii_case(SSZ_MEDIA_TYPE) {
        Ok(Encoding::Ssz)
    } else {
        Err(NegotiationError::UnsupportedMediaType(value.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Encoding::{Json, Ssz};

    const BOTH: &[Encoding] = &[Json, Ssz];

    #[test]
    fn absent_or_empty_accept_means_json() {
        assert_eq!(negotiate(None, BOTH), Ok(Json));
        assert_eq!(negotiate(Some("  "), BOTH), Ok(Json));
        assert!(matches!(
            negotiate(None, &[Ssz]),
            Err(NegotiationError::NotAcceptable(_))
        ));
    }

    #[test]
    fn the_specs_ssz_preference_picks_ssz_where_offered() {
        assert_eq!(negotiate(Some(PREFER_SSZ_ACCEPT), BOTH), Ok(Ssz));
        assert_eq!(negotiate(Some(PREFER_SSZ_ACCEPT), &[Json]), Ok(Json));
        assert_eq!(negotiate(Some("application/octet-stream"), BOTH), Ok(Ssz));
    }

    #[test]
    fn q_values_order_the_choice() {
        assert_eq!(
            negotiate(
                Some("application/octet-stream;q=0.5, application/json"),
                BOTH
            ),
            Ok(Json)
        );
        assert_eq!(
            negotiate(
                Some("application/json;q=0.1,application/octet-stream;q=0.2"),
                BOTH
            ),
            Ok(Ssz)
        );
        assert_eq!(
            negotiate(Some("APPLICATION/OCTET-STREAM; Q=1"), BOTH),
            Ok(Ssz)
        );
        // Equal weights: the server's order decides.
        assert_eq!(
            negotiate(Some("application/octet-stream, application/json"), BOTH),
            Ok(Json)
        );
        assert_eq!(
            negotiate(
                Some("application/octet-stream, application/json"),
                &[Ssz, Json]
            ),
            Ok(Ssz)
        );
    }

    #[test]
    fn wildcards_match_with_lower_specificity() {
        assert_eq!(negotiate(Some("*/*"), BOTH), Ok(Json));
        assert_eq!(negotiate(Some("application/*"), &[Ssz]), Ok(Ssz));
        // The exact range overrides the wildcard for that type.
        assert_eq!(
            negotiate(Some("application/json;q=0, */*;q=0.1"), BOTH),
            Ok(Ssz)
        );
        assert_eq!(negotiate(Some("text/*, */*;q=0.3"), BOTH), Ok(Json));
    }

    #[test]
    fn refusals_are_not_acceptable() {
        for header in [
            "text/html",
            "application/json;q=0",
            "application/xml, text/plain;q=0.5",
        ] {
            assert_eq!(
                negotiate(Some(header), BOTH),
                Err(NegotiationError::NotAcceptable(header.to_string())),
                "{header}"
            );
        }
        assert!(negotiate(Some("application/json"), &[Ssz]).is_err());
    }

    #[test]
    fn malformed_ranges_are_skipped() {
        assert_eq!(
            negotiate(Some("garbage, application/octet-stream"), BOTH),
            Ok(Ssz)
        );
        assert_eq!(
            negotiate(
                Some("application/json;q=2, application/octet-stream;q=0.1"),
                BOTH
            ),
            Ok(Ssz)
        );
        assert_eq!(
            negotiate(Some("application/json;q=0.12345"), BOTH).ok(),
            None
        );
        assert_eq!(parse_quality("0.9"), Some(900));
        assert_eq!(parse_quality("1.000"), Some(1000));
        assert_eq!(parse_quality("1.001"), None);
        assert_eq!(parse_quality("-0"), None);
    }

    #[test]
    fn content_type_selects_the_request_encoding() {
        assert_eq!(request_encoding(None), Ok(Json));
        assert_eq!(
            request_encoding(Some("application/json; charset=utf-8")),
            Ok(Json)
        );
        assert_eq!(request_encoding(Some("Application/Octet-Stream")), Ok(Ssz));
        assert_eq!(
            request_encoding(Some("text/plain")),
            Err(NegotiationError::UnsupportedMediaType("text/plain".into()))
        );
    }
}
