//! One-legged OAuth 1.0 (RFC 5849) with HMAC-SHA1, as storEDGE asks for: the customer's API key
//! and secret are the consumer key and secret, there is no token, and every request is signed.
//!
//! Written here rather than taken from a crate: the whole scheme is the signature base string
//! of RFC 5849 section 3.4.1 and one HMAC, the crates that offer it bring their own HTTP client
//! glue, and the unit test below checks this code against the RFC's own worked example.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use rand::RngCore;

/// The consumer (and, for the RFC's example only, a token) that signs a request.
pub struct Signer<'a> {
    pub consumer_key: &'a str,
    pub consumer_secret: &'a str,
    /// `(token, token secret)`; one-legged requests have none.
    pub token: Option<(&'a str, &'a str)>,
}

impl Signer<'_> {
    /// The `Authorization` header of a request with a fresh nonce and the current time.
    pub fn authorization(&self, method: &str, url: &url::Url) -> String {
        let mut nonce = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let timestamp = chrono::Utc::now().timestamp().to_string();
        self.authorization_with(method, url, &hex::encode(nonce), &timestamp)
    }

    /// The `Authorization` header with a given nonce and timestamp.
    pub fn authorization_with(
        &self,
        method: &str,
        url: &url::Url,
        nonce: &str,
        timestamp: &str,
    ) -> String {
        let mut oauth: Vec<(&str, &str)> = vec![
            ("oauth_consumer_key", self.consumer_key),
            ("oauth_nonce", nonce),
            ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", timestamp),
            ("oauth_version", "1.0"),
        ];
        if let Some((token, _)) = self.token {
            oauth.push(("oauth_token", token));
        }
        let signature = self.signature(method, url, &oauth);
        oauth.push(("oauth_signature", &signature));
        let fields: Vec<String> = oauth
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", encode(v)))
            .collect();
        format!("OAuth {}", fields.join(", "))
    }

    /// The base64 HMAC-SHA1 of the signature base string (RFC 5849 section 3.4).
    pub fn signature(&self, method: &str, url: &url::Url, oauth: &[(&str, &str)]) -> String {
        let base = base_string(method, url, oauth);
        let key = format!(
            "{}&{}",
            encode(self.consumer_secret),
            encode(self.token.map_or("", |(_, secret)| secret))
        );
        let mut mac = Hmac::<sha1::Sha1>::new_from_slice(key.as_bytes()).expect("any key length");
        mac.update(base.as_bytes());
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    }
}

/// `METHOD&base-URI&parameters`, each part percent-encoded (section 3.4.1).
fn base_string(method: &str, url: &url::Url, oauth: &[(&str, &str)]) -> String {
    let mut base_uri = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        // `url` keeps the port only when it is not the scheme's default, as 3.4.1.2 wants.
        base_uri.push_str(&format!(":{port}"));
    }
    base_uri.push_str(url.path());
    let mut params: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (encode(&k), encode(&v)))
        .chain(oauth.iter().map(|(k, v)| (encode(k), encode(v))))
        .collect();
    params.sort();
    let normalized: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "{}&{}&{}",
        method.to_ascii_uppercase(),
        encode(&base_uri),
        encode(&normalized.join("&"))
    )
}

/// RFC 3986 percent-encoding of everything but the unreserved characters (section 3.6).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 5849 section 1.2: the signed request for the photo, with its published signature.
    #[test]
    fn signs_the_rfc_5849_example() {
        let signer = Signer {
            consumer_key: "dpf43f3p2l4k3l03",
            consumer_secret: "kd94hf93k423kf44",
            token: Some(("nnch734d00sl2jdk", "pfkkdhi9sl3r4s00")),
        };
        let url =
            url::Url::parse("http://photos.example.net/photos?file=vacation.jpg&size=original")
                .unwrap();
        let oauth = [
            ("oauth_consumer_key", "dpf43f3p2l4k3l03"),
            ("oauth_token", "nnch734d00sl2jdk"),
            ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "137131202"),
            ("oauth_nonce", "chapoH"),
        ];
        assert_eq!(
            signer.signature("GET", &url, &oauth),
            "MdpQcU8iPSUjWoN/UDMsK2sui9I="
        );
    }

    #[test]
    fn one_legged_headers_carry_every_oauth_field() {
        let signer = Signer {
            consumer_key: "key 1",
            consumer_secret: "s3cret",
            token: None,
        };
        let url =
            url::Url::parse("https://api.example.com:8443/v1/7/units?page=2&per_page=100").unwrap();
        let header = signer.authorization_with("GET", &url, "abc", "1700000000");
        assert!(header.starts_with("OAuth oauth_consumer_key=\"key%201\", oauth_nonce=\"abc\", oauth_signature_method=\"HMAC-SHA1\", oauth_timestamp=\"1700000000\", oauth_version=\"1.0\", oauth_signature=\""), "{header}");
        assert!(!header.contains("oauth_token"));
        assert_eq!(encode("a b&c=d/é~"), "a%20b%26c%3Dd%2F%C3%A9~");
        assert_eq!(
            base_string("get", &url, &[("oauth_nonce", "abc")]),
            "GET&https%3A%2F%2Fapi.example.com%3A8443%2Fv1%2F7%2Funits&oauth_nonce%3Dabc%26page%3D2%26per_page%3D100"
        );
    }
}
