//! What a field of the vocabulary holds: a result's fields (`vocabulary.rs`) and a
//! run spec's keys (`spec_keys.rs`) are typed in the same words, the types a table
//! can store.

use serde::Serialize;

/// What a field holds, in the types a table can store.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Int,
    Float,
    Bool,
    String,
    /// A list of strings.
    Strings,
    /// One nested record (`record` names its fields' record).
    Record,
    /// A list of nested records.
    Records,
    /// Nested records as columns: an object of one list per field of `items`.
    Columns,
    /// A list of samples, each a tuple whose parts `unit` names.
    Series,
}
