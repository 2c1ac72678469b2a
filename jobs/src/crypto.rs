//! Secrets at rest (CRM credentials, webhook secrets): AES-256-GCM under the master key, a fresh
//! random nonce per value, the owning row's id as associated data (a sealed value copied to
//! another row does not open), and a leading key-id byte so the master key can be rotated.

use crate::config::MasterKey;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use rand::RngCore;

/// Id of the key sealing new values.
const KEY_ID: u8 = 1;

#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    #[error("sealed value is malformed")]
    Malformed,
    #[error("sealed value was made with unknown key id {0}")]
    UnknownKey(u8),
    #[error("sealed value does not open (wrong key, row or tampered)")]
    Open,
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
    out.push(KEY_ID);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&ciphertext);
    out
}

pub fn open(key: &MasterKey, row_id: &[u8], sealed: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let (&id, rest) = sealed.split_first().ok_or(CryptoError::Malformed)?;
    if id != KEY_ID {
        return Err(CryptoError::UnknownKey(id));
    }
    if rest.len() < 12 + 16 {
        return Err(CryptoError::Malformed);
    }
    let (nonce, ciphertext) = rest.split_at(12);
    Aes256Gcm::new(key.bytes().into())
        .decrypt(
            Nonce::from_slice(nonce),
            Payload {
                msg: ciphertext,
                aad: row_id,
            },
        )
        .map_err(|_| CryptoError::Open)
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
}
