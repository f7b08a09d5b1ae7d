//! A scanned JSON value: its kind and where it is in the source.

/// What kind of JSON value starts at a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    False,
    True,
    Number,
    String,
    Array,
    Object,
}

/// A scanned value: its kind and byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

impl Value {
    pub fn text<'a>(&self, src: &'a [u8]) -> &'a [u8] {
        &src[self.start..self.end]
    }

    /// ECMAScript truthiness of the value (`NaN` cannot come from JSON).
    pub fn truthy(&self, src: &[u8]) -> bool {
        match self.kind {
            Kind::Null | Kind::False => false,
            Kind::True | Kind::Array | Kind::Object => true,
            Kind::String => self.end - self.start > 2,
            Kind::Number => number_value(self.text(src)) != 0.0,
        }
    }
}

/// The f64 value of a validated number token (same rounding as JS).
pub fn number_value(raw: &[u8]) -> f64 {
    // A validated JSON number is ASCII and a valid Rust float literal.
    std::str::from_utf8(raw).ok().and_then(|t| t.parse::<f64>().ok()).unwrap_or(f64::NAN)
}
