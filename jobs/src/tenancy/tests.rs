use super::*;
use crate::config::MasterKey;

#[test]
fn an_unknown_address_is_checked_against_a_hash_of_the_same_cost() {
    use argon2::password_hash::PasswordHash;
    let real = hash_password("correct horse battery").unwrap();
    let stand_in = PasswordHash::new(&STAND_IN_HASH).expect("a real argon2 hash");
    let real = PasswordHash::new(&real).unwrap();
    assert_eq!(stand_in.algorithm, real.algorithm);
    assert_eq!(stand_in.version, real.version);
    assert_eq!(stand_in.params, real.params);
    assert!(stand_in.hash.is_some());
}

#[test]
fn keys_are_well_formed_and_hash_stably() {
    let hasher = KeyHasher::new(&MasterKey::new([7; 32]));
    let key = generate_key();
    assert!(well_formed(&key), "{key}");
    assert!(!well_formed("spk_short"));
    assert!(!well_formed(&key.replace("spk_", "xyz_")));
    let h = hasher.hash(&key);
    assert!(hasher.verify(&key, &h));
    assert!(!hasher.verify(&generate_key(), &h));
    let other = KeyHasher::new(&MasterKey::new([8; 32]));
    assert_ne!(other.hash(&key), h);
}

#[test]
fn trial_expiry_is_derived() {
    let now = Utc::now();
    assert_eq!(
        effective_state("trialing", Some(now - Duration::seconds(1)), now),
        "expired"
    );
    assert_eq!(
        effective_state("trialing", Some(now + Duration::days(1)), now),
        "trialing"
    );
    assert_eq!(
        effective_state("active", Some(now - Duration::days(9)), now),
        "active"
    );
    assert!(has_access("past_due"));
    assert!(!has_access("expired"));
    assert!(!has_access("canceled"));
}
