/// The JSON Schema of a Rust type `T` as MCP carries it (a tool's `inputSchema` and
/// `outputSchema`, an elicitation's `requestedSchema`): JSON Schema 2020-12 from schemars, doc
/// comments as descriptions, `Option<T>` fields not required.
///
/// See <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool>.
pub fn input_schema<T: schemars::JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    generator.into_root_schema_for::<T>().to_value()
}
