//! What a panic said: both front ends survive a probe or a benchmark that panics, and say
//! why it failed.

use std::any::Any;

/// The message a panic carried (`panic!("...")` or a formatted one), or a stand-in.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic with no message".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms of a panic's message are read, and anything else is named as such.
    #[test]
    fn a_panics_message_is_read() {
        let caught = |f: fn()| std::panic::catch_unwind(f).unwrap_err();
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let literal = caught(|| panic!("the literal"));
        let formatted = caught(|| panic!("formatted {}", 7));
        let other = caught(|| std::panic::panic_any(7u8));
        std::panic::set_hook(hook);
        assert_eq!(panic_message(literal.as_ref()), "the literal");
        assert_eq!(panic_message(formatted.as_ref()), "formatted 7");
        assert_eq!(panic_message(other.as_ref()), "a panic with no message");
    }
}
