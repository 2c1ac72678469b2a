use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn internal_ranges_are_refused_and_public_ones_pass() {
    let p = PrivateTargets::Refused;
    for bad in [
        "127.0.0.1",
        "127.8.9.10",
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "198.18.0.1",
        "::1",
        "::",
        "fe80::1",
        "fd00::1",
        "fc12::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::a00:1",
        "64:ff9b:1::a00:1",
        "64:ff9b:1::808:808",
        "64:ff9b:1:ffff::1",
        "::ffff:0:7f00:1",
        "::ffff:0:808:808",
        "2002:7f00:1::",
        "2001:db8::1",
    ] {
        assert!(p.check(ip(bad)).is_err(), "{bad} must be refused");
    }
    for good in [
        "93.184.216.34",
        "8.8.8.8",
        "172.32.0.1",
        "100.128.0.1",
        "2606:4700::1111",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ] {
        assert!(p.check(ip(good)).is_ok(), "{good} is public");
    }
    let refused = p.check(ip("169.254.169.254")).unwrap_err().to_string();
    assert!(
        refused.contains("169.254.169.254") && refused.contains("link-local"),
        "{refused}"
    );
}

#[test]
fn the_allow_list_opens_only_what_it_names() {
    assert_eq!(
        PrivateTargets::parse("false").unwrap(),
        PrivateTargets::Refused
    );
    assert_eq!(PrivateTargets::parse(" ").unwrap(), PrivateTargets::Refused);
    assert_eq!(PrivateTargets::parse("true").unwrap(), PrivateTargets::All);
    let p = PrivateTargets::parse("127.0.0.1, 10.20.0.0/16,::1").unwrap();
    assert!(p.check(ip("127.0.0.1")).is_ok());
    assert!(p.check(ip("127.0.0.2")).is_err());
    assert!(p.check(ip("10.20.3.4")).is_ok());
    assert!(p.check(ip("10.21.0.1")).is_err());
    assert!(p.check(ip("::1")).is_ok());
    assert!(p.check(ip("169.254.169.254")).is_err());
    assert!(PrivateTargets::All.check(ip("169.254.169.254")).is_ok());
    for bad in ["maybe", "10.0.0.0/33", "10.0.0", ","] {
        assert!(PrivateTargets::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn obviously_internal_hosts_are_refused_without_resolving() {
    let p = PrivateTargets::Refused;
    let host = |s: &str| url::Url::parse(s).unwrap();
    for bad in [
        "https://127.0.0.1/x",
        "https://[::1]/x",
        "https://10.0.0.1/",
        "https://169.254.169.254/latest/meta-data",
        "https://localhost:8443/",
        "https://LOCALHOST./",
        "https://api.localhost/",
        // The URL parser normalises other spellings of an IPv4 address.
        "https://2130706433/",
        "https://0x7f.1/",
        "https://[::ffff:127.0.0.1]/",
        "https://[::ffff:0:127.0.0.1]/",
        "https://[64:ff9b:1::a9fe:a9fe]/",
    ] {
        let u = host(bad);
        assert!(p.check_host(&u.host().unwrap()).is_err(), "{bad}");
    }
    for good in ["https://hooks.example.com/x", "https://93.184.216.34/"] {
        let u = host(good);
        assert!(p.check_host(&u.host().unwrap()).is_ok(), "{good}");
    }
    let loopback = PrivateTargets::parse("127.0.0.0/8").unwrap();
    let u = host("https://localhost:8443/");
    assert!(loopback.check_host(&u.host().unwrap()).is_ok());
}

#[tokio::test]
async fn the_resolver_drops_internal_answers() {
    use reqwest::dns::Resolve as _;
    let table: Lookup = Arc::new(|name: String| {
        Box::pin(async move {
            let ips: Vec<&str> = match name.as_str() {
                "internal.example" => vec!["10.0.0.1"],
                "metadata.example" => vec!["169.254.169.254"],
                "mixed.example" => vec!["127.0.0.1", "93.184.216.34"],
                "public.example" => vec!["93.184.216.34"],
                _ => vec![],
            };
            Ok(ips
                .into_iter()
                .map(|s| SocketAddr::new(s.parse().unwrap(), 0))
                .collect())
        })
    });
    let resolver = GuardedResolver {
        policy: Arc::new(PrivateTargets::Refused),
        lookup: table,
    };
    let resolve = |n: &str| resolver.resolve(n.parse().unwrap());
    let err = resolve("internal.example").await.err().unwrap().to_string();
    // The kind of address, not the address: the text reaches the customer.
    assert_eq!(
        err,
        "refused target internal.example: it resolves to a private address (internal addresses \
         are not delivered to)"
    );
    let err = resolve("metadata.example").await.err().unwrap().to_string();
    assert!(err.contains("link-local"), "{err}");
    let mixed: Vec<SocketAddr> = resolve("mixed.example").await.ok().unwrap().collect();
    assert_eq!(mixed, vec![SocketAddr::new(ip("93.184.216.34"), 0)]);
    assert!(resolve("public.example").await.is_ok());
    assert!(resolve("nothing.example").await.is_err());
}
