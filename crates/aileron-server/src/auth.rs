//! Bearer tokens: making them, storing only their SHA-256, roles.

use sha2::{Digest, Sha256};

/// What a token may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Submit actions, record decisions, enqueue asks; read its own decisions.
    Agent,
    /// Everything an agent may, plus deciding approvals and changing rules.
    Approver,
    /// The token created at first start: an approver.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Approver => "approver",
            Role::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "agent" => Some(Role::Agent),
            "approver" => Some(Role::Approver),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    /// May decide approvals and change rules.
    pub fn is_approver(self) -> bool {
        self >= Role::Approver
    }
}

/// Who sent a request.
#[derive(Clone, Debug)]
pub struct Caller {
    pub role: Role,
    /// The first 16 hex digits of the token's hash: who submitted an action.
    pub id: String,
}

/// A new random token: `ail_` and 43 URL-safe characters (256 bits).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    format!("ail_{}", base64url(&bytes))
}

/// A random id in the form of a UUID (version 4).
pub fn new_uuid() -> String {
    let mut b = random16();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// 16 bytes from the OS's random source, read 512 at a time per thread:
/// every evaluation takes an id, and one system call each was 2% of it.
fn random16() -> [u8; 16] {
    use std::cell::RefCell;
    const BATCH: usize = 512;
    thread_local! {
        static POOL: RefCell<([u8; BATCH], usize)> = const { RefCell::new(([0; BATCH], BATCH)) };
    }
    POOL.with(|pool| {
        let (bytes, used) = &mut *pool.borrow_mut();
        if *used == BATCH {
            getrandom::fill(bytes).expect("the OS random source works");
            *used = 0;
        }
        let mut out = [0u8; 16];
        out.copy_from_slice(&bytes[*used..*used + 16]);
        // Never handed out twice.
        bytes[*used..*used + 16].fill(0);
        *used += 16;
        out
    })
}

/// The SHA-256 of a token, hex: what the database keeps.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

fn base64url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (16 - 8 * i)));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Compares in time independent of where the first difference is.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_url_safe() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), 4 + 43);
        assert!(
            a[4..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_eq!(token_hash("x").len(), 64);
        let u = new_uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
    }
}
