//! Which proxies in front of Clarion are believed about the client's address.
//!
//! The client address keys the sign-in limits, so believing a forged
//! `X-Forwarded-For` would let an attacker pick a fresh address per guess.
//! `CLARION_TRUST_PROXY` says how many proxies there are (a hop count) or which
//! addresses they have (a CIDR list); nothing else is believed.

use axum::http::HeaderMap;
use std::net::{IpAddr, SocketAddr};

/// The proxies whose `X-Forwarded-For` entries are believed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TrustedProxies {
    /// No proxy: the socket's peer is the client.
    #[default]
    None,
    /// This many proxies append to `X-Forwarded-For` in front of Clarion; the
    /// client is the entry that many places from the right.
    Hops(u8),
    /// Proxies with these addresses: entries are read from the right, skipping
    /// trusted addresses, as long as the peer itself is trusted.
    Networks(Vec<Cidr>),
}

/// An IPv4 or IPv6 network (`10.0.0.0/8`, `fd00::/8`, or one address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `addr` or `addr/prefix`.
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let text = text.trim();
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("{text:?} is not an IP address or network"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("{text:?} has a prefix length outside 0..={max}"))?,
        };
        Ok(Cidr { addr, prefix })
    }

    /// True when `ip` is inside this network (IPv4-mapped IPv6 addresses count as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                masked(u32::from(net).into(), 32, self.prefix)
                    == masked(u32::from(ip).into(), 32, self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                masked(u128::from(net), 128, self.prefix) == masked(u128::from(ip), 128, self.prefix)
            }
            _ => false,
        }
    }
}

fn masked(bits: u128, width: u32, prefix: u8) -> u128 {
    let keep = u32::from(prefix).min(width);
    if keep == 0 { 0 } else { bits >> (width - keep) }
}

impl TrustedProxies {
    /// Reads `CLARION_TRUST_PROXY`: empty/`0`/`false` none, a number of hops
    /// (`true` is one hop, as before), or a comma-separated list of networks.
    pub fn parse(text: &str) -> Result<TrustedProxies, String> {
        let t = text.trim().to_ascii_lowercase();
        match t.as_str() {
            "" | "0" | "false" | "no" | "off" => return Ok(TrustedProxies::None),
            "true" | "yes" | "on" => return Ok(TrustedProxies::Hops(1)),
            _ => {}
        }
        if t.bytes().all(|b| b.is_ascii_digit()) {
            return t
                .parse::<u8>()
                .ok()
                .filter(|n| (1..=16).contains(n))
                .map(TrustedProxies::Hops)
                .ok_or_else(|| format!("{text:?}: a hop count must be 1 to 16"));
        }
        let nets = t
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(Cidr::parse)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TrustedProxies::Networks(nets))
    }

    /// The client's address as text: the socket's peer, or the entry of
    /// `X-Forwarded-For` the trusted proxies vouch for. `unknown` when neither
    /// is available (in-process tests).
    pub fn client_ip(&self, headers: &HeaderMap, peer: Option<SocketAddr>) -> String {
        let peer_ip = peer.map(|p| p.ip());
        let forwarded: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .collect();
        let chosen = match self {
            TrustedProxies::None => None,
            TrustedProxies::Hops(n) => {
                let n = usize::from(*n);
                forwarded
                    .len()
                    .checked_sub(n)
                    .and_then(|i| forwarded.get(i))
                    .or(forwarded.first())
                    .copied()
            }
            TrustedProxies::Networks(nets) => {
                let trusted = |ip: IpAddr| nets.iter().any(|n| n.contains(ip));
                if peer_ip.is_some_and(trusted) {
                    forwarded
                        .iter()
                        .rev()
                        .find(|e| e.parse::<IpAddr>().map_or(true, |ip| !trusted(ip)))
                        .or(forwarded.first())
                        .copied()
                } else {
                    None
                }
            }
        };
        match (chosen, peer_ip) {
            (Some(c), _) => c.to_string(),
            (None, Some(ip)) => ip.to_string(),
            (None, None) => "unknown".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn xff(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn the_setting_is_a_hop_count_or_a_network_list() {
        assert_eq!(TrustedProxies::parse("").unwrap(), TrustedProxies::None);
        assert_eq!(TrustedProxies::parse("0").unwrap(), TrustedProxies::None);
        assert_eq!(TrustedProxies::parse("true").unwrap(), TrustedProxies::Hops(1));
        assert_eq!(TrustedProxies::parse("2").unwrap(), TrustedProxies::Hops(2));
        assert!(TrustedProxies::parse("99").is_err());
        assert!(TrustedProxies::parse("maybe").is_err());
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
        let TrustedProxies::Networks(n) = TrustedProxies::parse("10.0.0.0/8, ::1").unwrap() else {
            panic!("networks expected");
        };
        assert_eq!(n.len(), 2);
    }

    #[test]
    fn networks_contain_their_addresses_only() {
        let n = Cidr::parse("10.1.0.0/16").unwrap();
        assert!(n.contains("10.1.200.3".parse().unwrap()));
        assert!(!n.contains("10.2.0.1".parse().unwrap()));
        assert!(n.contains("::ffff:10.1.0.9".parse().unwrap()));
        assert!(
            Cidr::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        let v6 = Cidr::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("fe80::1".parse().unwrap()));
    }

    #[test]
    fn forwarded_for_is_believed_only_as_far_as_the_trusted_proxies() {
        let peer: SocketAddr = "10.0.0.7:5000".parse().unwrap();
        let h = xff("6.6.6.6, 1.2.3.4, 10.0.0.5");
        assert_eq!(TrustedProxies::None.client_ip(&h, Some(peer)), "10.0.0.7");
        assert_eq!(TrustedProxies::Hops(1).client_ip(&h, Some(peer)), "10.0.0.5");
        assert_eq!(TrustedProxies::Hops(2).client_ip(&h, Some(peer)), "1.2.3.4");
        // More hops than entries: the leftmost entry.
        assert_eq!(TrustedProxies::Hops(9).client_ip(&h, Some(peer)), "6.6.6.6");
        let nets = TrustedProxies::parse("10.0.0.0/8").unwrap();
        assert_eq!(nets.client_ip(&h, Some(peer)), "1.2.3.4");
        // A peer outside the trusted networks is the client, whatever it claims.
        let outsider: SocketAddr = "203.0.113.9:1".parse().unwrap();
        assert_eq!(nets.client_ip(&h, Some(outsider)), "203.0.113.9");
        assert_eq!(TrustedProxies::None.client_ip(&HeaderMap::new(), None), "unknown");
    }
}
