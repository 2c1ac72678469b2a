//! Secrets at rest (CRM credentials, webhook secrets, reset mails): AES-256-GCM under the
//! master key, a fresh random nonce per value, the owning row's id as associated data (a sealed
//! value copied to another row does not open), and a leading key-id byte so the master key can
//! be rotated: a value opens with the key its id names, or any other key configured (values
//! sealed before key ids were derived carry id 1).

use crate::config::MasterKey;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use rand::RngCore;
use sha2::{Digest, Sha256};

#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    #[error("sealed value is malformed")]
    Malformed,
    #[error("sealed value does not open (wrong key, row or tampered)")]
    Open,
}

/// The id byte written before values sealed by `key`: derived from the key (never revealing
/// it), so every process that holds a key names it alike.
/// A secret token for a link or a cookie: 32 random bytes, URL-safe base64 without padding.
pub fn random_token() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// What is stored of a token: its SHA-256 (the token itself is never stored).
pub fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

pub fn key_id(key: &[u8; 32]) -> u8 {
    Sha256::new()
        .chain_update(b"sealing-key-id/v1")
        .chain_update(key)
        .finalize()[0]
}

pub fn seal(key: &MasterKey, row_id: &[u8], plaintext: &[u8]) -> Vec<u8> {
    let cipher = Aes256Gcm::new(key.bytes().into());
    let mut nonce = [0u8; 12];
    rand::rngs::OsRng.fill_bytes(&mut nonce);
    let ciphertext = cipher
        .encrypt(
            Nonce::from_slice(&nonce),
            Payload {
                msg: plaintext,
                aad: row_id,
            },
        )
        .expect("AES-GCM encryption of an in-memory value does not fail");
    let mut out = Vec::with_capacity(1 + 12 + ciphertext.len());
    out.push(key_id(key.bytes()));
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&ciphertext);
    out
}

/// Opens a sealed value with the key its id names, then with the other configured keys (the
/// authentication tag tells a right key from a wrong one).
pub fn open(key: &MasterKey, row_id: &[u8], sealed: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let (&id, rest) = sealed.split_first().ok_or(CryptoError::Malformed)?;
    if rest.len() < 12 + 16 {
        return Err(CryptoError::Malformed);
    }
    let (nonce, ciphertext) = rest.split_at(12);
    let (named, others): (Vec<&[u8; 32]>, Vec<&[u8; 32]>) =
        key.opening_keys().partition(|k| key_id(k) == id);
    named
        .into_iter()
        .chain(others)
        .find_map(|k| {
            Aes256Gcm::new(k.into())
                .decrypt(
                    Nonce::from_slice(nonce),
                    Payload {
                        msg: ciphertext,
                        aad: row_id,
                    },
                )
                .ok()
        })
        .ok_or(CryptoError::Open)
}

/// Whether a sealed value was sealed by the current key (by its id byte).
pub fn is_current(key: &MasterKey, sealed: &[u8]) -> bool {
    sealed.first() == Some(&key_id(key.bytes()))
}

/// A masked hint of a credential: its last four characters.
pub fn hint(secret: &str) -> String {
    let tail: String = secret
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("••••{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_and_opens_only_for_the_same_row_and_key() {
        let key = MasterKey::new([3; 32]);
        let sealed = seal(&key, b"row-1", b"s3cret");
        assert_eq!(open(&key, b"row-1", &sealed).unwrap(), b"s3cret");
        assert!(matches!(
            open(&key, b"row-2", &sealed),
            Err(CryptoError::Open)
        ));
        assert!(matches!(
            open(&MasterKey::new([4; 32]), b"row-1", &sealed),
            Err(CryptoError::Open)
        ));
        let mut tampered = sealed.clone();
        *tampered.last_mut().unwrap() ^= 1;
        assert!(open(&key, b"row-1", &tampered).is_err());
        assert_ne!(
            seal(&key, b"row-1", b"s3cret"),
            sealed,
            "fresh nonce per value"
        );
        assert_eq!(hint("abcdefgh"), "••••efgh");
    }

    #[test]
    fn a_previous_key_still_opens_while_new_values_take_the_new_one() {
        let (old, new) = ([3; 32], [9; 32]);
        let sealed_old = seal(&MasterKey::new(old), b"row-1", b"s3cret");
        let rotating = MasterKey::with_keys(new, vec![old], None);
        assert_eq!(open(&rotating, b"row-1", &sealed_old).unwrap(), b"s3cret");
        assert!(!is_current(&rotating, &sealed_old));
        let sealed_new = seal(&rotating, b"row-1", b"s3cret");
        assert!(is_current(&rotating, &sealed_new));
        assert_eq!(sealed_new[0], key_id(&new));
        // Once the old key is gone, only new values open.
        let after = MasterKey::new(new);
        assert_eq!(open(&after, b"row-1", &sealed_new).unwrap(), b"s3cret");
        assert!(open(&after, b"row-1", &sealed_old).is_err());
        // A value sealed before key ids were derived (id 1) still opens with its key.
        let mut legacy = seal(&MasterKey::new(old), b"row-1", b"s3cret");
        legacy[0] = 1;
        assert_eq!(open(&rotating, b"row-1", &legacy).unwrap(), b"s3cret");
    }
}
