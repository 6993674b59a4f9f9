use sha2::{Digest, Sha256};

/// SHA-256 of `bytes`, lower-case hex.
///
/// SHA-256 rather than a faster non-cryptographic hash because the same value is the
/// edit engine's `expectedHash` precondition, which clients compute themselves with
/// whatever their platform offers; every platform offers SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(sha256(bytes))
}

/// SHA-256 of `bytes`, the 32 raw bytes (a key stored in binary).
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Incremental SHA-256 for content that arrives in pieces.
#[derive(Default)]
pub struct ContentHasher(Sha256);

impl ContentHasher {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    pub fn finish_hex(self) -> String {
        hex::encode(self.0.finalize())
    }
    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector_and_incremental_agree() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut h = ContentHasher::new();
        h.update(b"a");
        h.update(b"bc");
        assert_eq!(h.finish_hex(), sha256_hex(b"abc"));
    }
}
