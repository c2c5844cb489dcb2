//! Task ids: unguessable, because a task id acts as a bearer handle
//! ([Tasks security considerations](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#security-considerations)).

use rand::RngCore;

/// A new task id: `t_` and 32 lowercase hex digits (128 bits from `rand::rng()`, a CSPRNG
/// (ChaCha12) seeded from the operating system and reseeded periodically).
pub fn new_task_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    let mut id = String::with_capacity(34);
    id.push_str("t_");
    for b in bytes {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_carry_128_bits_and_differ() {
        let a = super::new_task_id();
        let b = super::new_task_id();
        assert_eq!(a.len(), 34);
        assert!(a[2..].bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
