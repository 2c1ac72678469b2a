//! An OAuth 1.0 (RFC 5849) HMAC-SHA1 verifier for the test CRM, written apart from the service's
//! signer so that the two check each other; the unit test holds it to the RFC's worked example.

use base64::Engine as _;
use hmac::Mac as _;
use std::collections::BTreeMap;

/// Why a request's signature is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    NoHeader,
    Malformed,
    WrongKey,
    WrongMethod,
    BadSignature,
    Stale,
}

fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_' || b == b'~'
}

pub fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if unreserved(b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn percent_decode(s: &str, plus_is_space: bool) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The `oauth_*` fields of an `Authorization: OAuth ...` header, decoded.
pub fn header_fields(header: &str) -> Option<BTreeMap<String, String>> {
    let rest = header.trim().strip_prefix("OAuth ")?;
    let mut fields = BTreeMap::new();
    for part in rest.split(',') {
        let (k, v) = part.trim().split_once('=')?;
        let v = v.trim().strip_prefix('"')?.strip_suffix('"')?;
        fields.insert(k.trim().to_owned(), percent_decode(v, false)?);
    }
    Some(fields)
}

/// The base64 HMAC-SHA1 signature of a request, from its parts as received.
pub fn expected_signature(
    method: &str,
    base_uri: &str,
    raw_query: Option<&str>,
    oauth: &BTreeMap<String, String>,
    consumer_secret: &str,
    token_secret: &str,
) -> Option<String> {
    let mut params: Vec<(String, String)> = Vec::new();
    for pair in raw_query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        params.push((
            percent_encode(&percent_decode(k, true)?),
            percent_encode(&percent_decode(v, true)?),
        ));
    }
    for (k, v) in oauth {
        if k != "oauth_signature" && k != "realm" {
            params.push((percent_encode(k), percent_encode(v)));
        }
    }
    params.sort();
    let joined = params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let base = [method, base_uri, &joined]
        .iter()
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                (*part).to_owned()
            } else {
                percent_encode(part)
            }
        })
        .collect::<Vec<_>>()
        .join("&");
    let key = format!(
        "{}&{}",
        percent_encode(consumer_secret),
        percent_encode(token_secret)
    );
    let mut mac = hmac::Hmac::<sha1::Sha1>::new_from_slice(key.as_bytes()).ok()?;
    mac.update(base.as_bytes());
    Some(base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes()))
}

/// Checks a one-legged request to `https://{host}{path}?{query}` signed by `key` and `secret`.
pub fn verify(
    method: &str,
    host: &str,
    path: &str,
    query: Option<&str>,
    authorization: Option<&str>,
    key: &str,
    secret: &str,
) -> Result<(), Refusal> {
    let fields =
        header_fields(authorization.ok_or(Refusal::NoHeader)?).ok_or(Refusal::Malformed)?;
    if fields.get("oauth_consumer_key").map(String::as_str) != Some(key) {
        return Err(Refusal::WrongKey);
    }
    if fields.get("oauth_signature_method").map(String::as_str) != Some("HMAC-SHA1") {
        return Err(Refusal::WrongMethod);
    }
    if fields.get("oauth_nonce").is_none_or(String::is_empty) {
        return Err(Refusal::Malformed);
    }
    let timestamp: i64 = fields
        .get("oauth_timestamp")
        .and_then(|t| t.parse().ok())
        .ok_or(Refusal::Malformed)?;
    if (chrono::Utc::now().timestamp() - timestamp).abs() > 300 {
        return Err(Refusal::Stale);
    }
    let expected = expected_signature(
        method,
        &format!("https://{}{path}", host.to_ascii_lowercase()),
        query,
        &fields,
        secret,
        "",
    )
    .ok_or(Refusal::Malformed)?;
    if fields.get("oauth_signature") == Some(&expected) {
        Ok(())
    } else {
        Err(Refusal::BadSignature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 5849 section 1.2: the request for the photo and its published signature.
    #[test]
    fn the_rfc_5849_example_verifies() {
        let header = r#"OAuth realm="Photos", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_token="nnch734d00sl2jdk", oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131202", oauth_nonce="chapoH", oauth_signature="MdpQcU8iPSUjWoN%2FUDMsK2sui9I%3D""#;
        let fields = header_fields(header).unwrap();
        assert_eq!(fields["oauth_signature"], "MdpQcU8iPSUjWoN/UDMsK2sui9I=");
        let signature = expected_signature(
            "GET",
            "http://photos.example.net/photos",
            Some("file=vacation.jpg&size=original"),
            &fields,
            "kd94hf93k423kf44",
            "pfkkdhi9sl3r4s00",
        )
        .unwrap();
        assert_eq!(signature, fields["oauth_signature"]);
    }
}
