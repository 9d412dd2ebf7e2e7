//! The client's real address behind a reverse proxy. Only connections from
//! the proxies an operator names (`--trusted-proxy CIDR`) have their
//! forwarding header read, and only the header it names
//! (`--client-address-header`: `x-forwarded-for`, the default, or
//! `forwarded`, RFC 7239): a proxy passes the other header through as the
//! client wrote it. Everyone else's headers are ignored, so a client cannot
//! choose its address.
//!
//! The header lists the hops in order, each proxy appending the address it
//! was reached from. Walking it from the right, past the addresses of
//! trusted proxies, the first address that is not one is the client's:
//! whatever a client wrote itself is further left, never reached. A hop
//! that cannot be read (`unknown`, an obfuscated name, garbage) stops the
//! walk: the request counts as the last trusted hop's, the proxy's.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;
use ipnet::IpNet;

use crate::limits::address::{Networks, canonical};

/// Which header a trusted proxy sets (`--client-address-header`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AddressHeader {
    /// `X-Forwarded-For: client, proxy1, ...` (Caddy, nginx, HAProxy, most
    /// load balancers).
    #[default]
    XForwardedFor,
    /// `Forwarded: for=client, for=proxy1;proto=https, ...` (RFC 7239).
    Forwarded,
}

/// The proxies whose forwarding header is believed, and the header.
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies {
    networks: Networks,
    header: AddressHeader,
}

impl TrustedProxies {
    /// Believes `header` from connections of `networks` (none: nobody's).
    pub fn new(networks: Vec<IpNet>, header: AddressHeader) -> TrustedProxies {
        TrustedProxies { networks: Networks::new(networks), header }
    }

    /// Whether `address` is a trusted proxy's.
    pub fn contains(&self, address: IpAddr) -> bool {
        self.networks.contains(address)
    }

    /// The address a request that arrived from `peer` with `headers` is
    /// counted, limited and logged under.
    pub fn client_of(&self, peer: SocketAddr, headers: &HeaderMap) -> SocketAddr {
        if !self.contains(peer.ip()) {
            return peer;
        }
        let name = match self.header {
            AddressHeader::XForwardedFor => "x-forwarded-for",
            AddressHeader::Forwarded => "forwarded",
        };
        // Every instance of the header, in order, as one list.
        let mut hops = Vec::new();
        for value in headers.get_all(name) {
            let Ok(text) = value.to_str() else {
                // Not text: nothing in it can be told apart.
                return peer;
            };
            for element in text.split(',') {
                hops.push(match self.header {
                    AddressHeader::XForwardedFor => node(element),
                    AddressHeader::Forwarded => forwarded_for(element),
                });
            }
        }
        let mut client = peer.ip();
        for hop in hops.iter().rev() {
            match hop {
                Some(address) => {
                    client = *address;
                    if !self.contains(*address) {
                        break;
                    }
                }
                None => break,
            }
        }
        SocketAddr::new(client, peer.port())
    }
}

/// The `for=` of one element of `Forwarded` (`for=192.0.2.60;proto=http`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        key.trim().eq_ignore_ascii_case("for").then(|| node(value))?
    })
}

/// One hop's address: `192.0.2.60`, `192.0.2.60:4711`, `2001:db8::1`,
/// `[2001:db8::1]:4711`, quoted or not; `None` for anything else.
fn node(text: &str) -> Option<IpAddr> {
    let text = text.trim().trim_matches('"');
    let address = match text.strip_prefix('[') {
        Some(rest) => rest.split(']').next()?.parse().ok()?,
        None => text.parse::<IpAddr>().ok().or_else(|| text.parse::<SocketAddr>().ok().map(|s| s.ip()))?,
    };
    Some(canonical(address))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: &str, values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), v.parse().unwrap());
        }
        map
    }

    fn proxies(header: AddressHeader) -> TrustedProxies {
        TrustedProxies::new(vec!["10.0.0.0/8".parse().unwrap(), "fd00::/8".parse().unwrap()], header)
    }

    fn at(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().unwrap(), 4000)
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_right_most_address_that_is_not_a_proxy_s_is_the_client_s() {
        let p = proxies(AddressHeader::XForwardedFor);
        let client = |values: &[&str]| p.client_of(at("10.0.0.2"), &headers("x-forwarded-for", values)).ip();
        assert_eq!(client(&["198.51.100.7"]), ip("198.51.100.7"));
        // What the client wrote itself is further left: never reached.
        assert_eq!(client(&["203.0.113.9, 198.51.100.7"]), ip("198.51.100.7"));
        // Past the proxies' own addresses, over several headers.
        assert_eq!(client(&["203.0.113.9, 198.51.100.7", "10.1.1.1"]), ip("198.51.100.7"));
        assert_eq!(client(&["[2001:db8::7]:5000"]), ip("2001:db8::7"));
        assert_eq!(client(&["198.51.100.7:5000"]), ip("198.51.100.7"));
        assert_eq!(client(&["::ffff:198.51.100.7"]), ip("198.51.100.7"));
        // Unreadable: the proxy's own (the last hop believed).
        assert_eq!(client(&["unknown"]), ip("10.0.0.2"));
        assert_eq!(client(&["198.51.100.7, 10.1.1.1, garbage"]), ip("10.0.0.2"));
        assert_eq!(client(&["198.51.100.7, garbage, 10.1.1.1"]), ip("10.1.1.1"));
        assert_eq!(client(&[]), ip("10.0.0.2"), "no header: the proxy's");
        // Every hop a proxy: the left-most.
        assert_eq!(client(&["10.9.9.9, 10.1.1.1"]), ip("10.9.9.9"));
    }

    #[test]
    fn only_a_trusted_proxy_s_header_and_only_the_one_named_is_read() {
        let p = proxies(AddressHeader::XForwardedFor);
        let forged = headers("x-forwarded-for", &["198.51.100.7"]);
        assert_eq!(p.client_of(at("192.0.2.1"), &forged), at("192.0.2.1"), "a client names no address");
        let other = headers("forwarded", &["for=198.51.100.7"]);
        assert_eq!(p.client_of(at("10.0.0.2"), &other), at("10.0.0.2"), "the header the proxy does not set");
        assert_eq!(TrustedProxies::default().client_of(at("10.0.0.2"), &forged), at("10.0.0.2"), "none trusted");
        assert!(p.contains(ip("::ffff:10.0.0.2")), "a mapped address is the IPv4 one");
    }

    #[test]
    fn forwarded_is_read_as_rfc_7239_writes_it() {
        let p = proxies(AddressHeader::Forwarded);
        let client = |values: &[&str]| p.client_of(at("10.0.0.2"), &headers("forwarded", values)).ip();
        assert_eq!(client(&["for=198.51.100.7;proto=https;by=10.0.0.2"]), ip("198.51.100.7"));
        assert_eq!(client(&["For=\"[2001:db8:cafe::17]:4711\""]), ip("2001:db8:cafe::17"));
        assert_eq!(client(&["for=203.0.113.9, for=198.51.100.7", "for=10.3.3.3"]), ip("198.51.100.7"));
        assert_eq!(client(&["for=_hidden"]), ip("10.0.0.2"));
        assert_eq!(client(&["proto=https"]), ip("10.0.0.2"), "no for=");
    }
}
