//! The semantic model: entities, attributes, joins, measures, time dimensions,
//! schema areas and the ambiguity dictionary, loaded from TOML and validated.

pub mod introspect;
