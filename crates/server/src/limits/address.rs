//! Client addresses as the limits count them: an IPv4 address alone, an
//! IPv6 address by its /64 network (one subscriber is commonly given a whole
//! /64, so counting single IPv6 addresses would give one client endless
//! keys), and the networks an operator names: exempt from the per-address
//! limits, or trusted as reverse proxies.

use std::net::{IpAddr, Ipv6Addr};

/// The key one client address is counted under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AddressKey(IpAddr);

impl AddressKey {
    /// The key of `addr`: IPv4 as it is (an IPv4-mapped IPv6 address too),
    /// IPv6 by its /64 network.
    pub fn of(addr: IpAddr) -> AddressKey {
        match canonical(addr) {
            IpAddr::V6(v6) => {
                let network = u128::from(v6) & !((1u128 << 64) - 1);
                AddressKey(IpAddr::V6(Ipv6Addr::from(network)))
            }
            v4 => AddressKey(v4),
        }
    }
}

impl std::fmt::Display for AddressKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/64"),
        }
    }
}

/// An address as the networks below see it: an IPv4 address mapped into
/// IPv6 (`::ffff:192.0.2.1`, a dual-stack listener's) is the IPv4 address.
pub fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    }
}

/// Networks an operator names (`--exempt-address`, `--trusted-proxy`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Networks(Vec<ipnet::IpNet>);

/// Networks whose clients no per-address limit applies to (`--exempt-address`):
/// a load test's own address, say.
pub type Exempt = Networks;

impl Networks {
    /// These networks (an address alone is a network of one).
    pub fn new(networks: Vec<ipnet::IpNet>) -> Networks {
        Networks(networks)
    }

    /// Whether `addr` is in one of them.
    pub fn contains(&self, addr: IpAddr) -> bool {
        let addr = canonical(addr);
        self.0.iter().any(|net| net.contains(&addr))
    }

    /// Whether none is exempt.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An address or a network as written on the command line: `127.0.0.1`,
/// `10.0.0.0/8`, `::1`, `2001:db8::/48`.
pub fn parse_network(text: &str) -> Result<ipnet::IpNet, String> {
    let text = text.trim();
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("'{text}' is neither an address nor a network (ADDRESS or ADDRESS/PREFIX)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_count_by_their_64_network() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:ffff:ffff:ffff".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(AddressKey::of(a), AddressKey::of(b), "one /64");
        assert_ne!(AddressKey::of(a), AddressKey::of(c), "another /64");
        assert_eq!(AddressKey::of(a).to_string(), "2001:db8:1:2::/64");
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(AddressKey::of(v4), AddressKey::of(mapped));
        assert_ne!(AddressKey::of(v4), AddressKey::of("192.0.2.8".parse().unwrap()), "IPv4 by the address");
    }

    #[test]
    fn exempt_networks() {
        let exempt = Exempt::new(vec![parse_network("127.0.0.1").unwrap(), parse_network("10.0.0.0/8").unwrap()]);
        assert!(exempt.contains("127.0.0.1".parse().unwrap()));
        assert!(exempt.contains("::ffff:10.1.2.3".parse().unwrap()));
        assert!(!exempt.contains("127.0.0.2".parse().unwrap()));
        assert!(parse_network("not an address").is_err());
        assert!(parse_network("2001:db8::/48").is_ok());
    }
}
