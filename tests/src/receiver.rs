//! A real HTTPS server on loopback for the tests and the benchmark (a webhook receiver, a CRM):
//! at start it makes a certificate authority and a certificate for `localhost` and `127.0.0.1`
//! signed by it, writes the authority's PEM to a file (for `OUTBOUND_CA_FILE`), and serves HTTP/1.1 over TLS on a
//! loopback port. Every request is recorded with its raw body; the answer to the n-th request
//! (from 0) is chosen by the test.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_rustls::rustls;

/// The answer to one request.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    /// Wait this long before answering (a slow receiver).
    pub delay: Duration,
    /// A `Location` header (a redirect).
    pub location: Option<String>,
    /// Further headers of the answer.
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

impl Reply {
    pub fn status(status: u16) -> Self {
        Self {
            status,
            delay: Duration::ZERO,
            location: None,
            headers: Vec::new(),
            body: format!("answer {status}"),
        }
    }

    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn redirect(to: &str) -> Self {
        let mut r = Self::status(302);
        r.location = Some(to.to_owned());
        r
    }
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Hit {
    pub at: Instant,
    pub path: String,
    /// The query string, without its `?`.
    pub query: Option<String>,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    /// The raw body bytes.
    pub body: Vec<u8>,
}

impl Hit {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the body is JSON")
    }
}

type Respond = Arc<dyn Fn(usize, &Hit) -> Reply + Send + Sync>;

/// A certificate authority made for one test, its PEM written to a file.
pub struct TestCa {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
    pub pem_file: PathBuf,
}

impl TestCa {
    pub fn new() -> Self {
        let key = rcgen::KeyPair::generate().expect("key pair");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "webhook test authority");
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).expect("CA certificate");
        let pem_file =
            std::env::temp_dir().join(format!("webhook-ca-{}.pem", uuid::Uuid::new_v4().simple()));
        std::fs::write(&pem_file, cert.pem()).expect("CA file is written");
        Self {
            cert,
            key,
            pem_file,
        }
    }

    pub fn pem_path(&self) -> &str {
        self.pem_file.to_str().expect("temp paths are UTF-8")
    }

    /// A server certificate for `localhost`, 127.0.0.1 to 127.0.0.3 and ::1.
    fn server_config(&self) -> rustls::ServerConfig {
        let key = rcgen::KeyPair::generate().expect("key pair");
        let names = ["localhost", "127.0.0.1", "127.0.0.2", "127.0.0.3", "::1"]
            .map(str::to_owned)
            .to_vec();
        let params = rcgen::CertificateParams::new(names).expect("params");
        let cert = params
            .signed_by(&key, &self.cert, &self.key)
            .expect("server certificate");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(
                    rustls::pki_types::PrivatePkcs8KeyDer::from(key.serialize_der()),
                ),
            )
            .expect("server TLS configuration")
    }
}

impl Default for TestCa {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TestCa {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.pem_file);
    }
}

/// A running receiver; stops when dropped.
pub struct Receiver {
    pub addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// A receiver on 127.0.0.1 with a certificate from `ca`.
    pub async fn start(
        ca: &TestCa,
        respond: impl Fn(usize, &Hit) -> Reply + Send + Sync + 'static,
    ) -> Self {
        Self::start_on(ca, "127.0.0.1".parse().expect("ip"), respond).await
    }

    /// A receiver on `ip` (a loopback address).
    pub async fn start_on(
        ca: &TestCa,
        ip: IpAddr,
        respond: impl Fn(usize, &Hit) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(ca.server_config()));
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(ip, 0))
            .await
            .expect("receiver binds");
        let addr = listener.local_addr().expect("bound address");
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let respond: Respond = Arc::new(respond);
        let task = tokio::spawn({
            let hits = hits.clone();
            async move {
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        continue;
                    };
                    let (acceptor, hits, respond) =
                        (acceptor.clone(), hits.clone(), respond.clone());
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                            let (hits, respond) = (hits.clone(), respond.clone());
                            async move { Ok::<_, hyper::Error>(answer(req, &hits, &respond).await) }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(tls), service)
                            .await;
                    });
                }
            }
        });
        Self { addr, hits, task }
    }

    /// `https://{ip}:{port}{path}`.
    pub fn url(&self, path: &str) -> String {
        match self.addr.ip() {
            IpAddr::V6(ip) => format!("https://[{ip}]:{}{path}", self.addr.port()),
            IpAddr::V4(ip) => format!("https://{ip}:{}{path}", self.addr.port()),
        }
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().expect("hits lock").clone()
    }

    pub fn count(&self) -> usize {
        self.hits.lock().expect("hits lock").len()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    req: Request<Incoming>,
    hits: &Mutex<Vec<Hit>>,
    respond: &Respond,
) -> Response<Full<Bytes>> {
    let at = Instant::now();
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    let hit = Hit {
        at,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    };
    let reply = {
        let mut hits = hits.lock().expect("hits lock");
        let reply = respond(hits.len(), &hit);
        hits.push(hit);
        reply
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = Response::builder().status(reply.status);
    if let Some(location) = &reply.location {
        response = response.header("location", location);
    }
    for (name, value) in &reply.headers {
        response = response.header(*name, value);
    }
    response
        .body(Full::new(Bytes::from(reply.body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// `sha256=<hex>` of `body` under `secret`, computed the way a receiver would.
pub fn expected_signature(secret: &str, body: &[u8]) -> String {
    use hmac::Mac as _;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("any key");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}
