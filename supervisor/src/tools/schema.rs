//! Tool schemas every client accepts, at the least cost to a model's context and to a client
//! that validates every result. schemars writes an `Option<T>` as a type array (`"type":
//! ["integer", "null"]`) or as `anyOf` with a `null` branch. Clients that map tool schemas onto
//! a single-type dialect (Gemini's function declarations, the OpenAPI 3.0 subset) reject type
//! arrays, so every schema a client sees is rewritten once, when the router is built. On both
//! sides, absent means "none": an optional argument or result field is simply not `required`,
//! and its `null` branch goes (the guard still takes an explicit `null` for an optional
//! argument as "not given"; results never carry a `null`, see
//! `report::ExecuteCodeResult`).
//!
//! Input schemas are read by the model on every turn, so what tells it nothing goes: `$schema`
//! (2020-12 is MCP's default dialect), `"default": null` (an argument that is not `required`
//! already has no value), numeric `format` (`uint64`, `double`: `type`, `minimum` and `maximum`
//! say it), and `$ref`s to `$defs` (each enum is inlined where it is used, with the argument's
//! own description, not the Rust type's). The guard (`check_arguments`, in the transport layer)
//! reads only `type`, `minimum`, `maximum` and `required`, which stay.
//!
//! Output schemas are checked by the official SDKs against every result, so they are flat and
//! plain ([`compact_output`]): every `$ref` inlined, enums as `enum` lists (not `oneOf` of
//! documented constants), no bounds or formats, and short descriptions. Validating a result
//! then costs a client a walk over a few dozen plain properties.

use rmcp::model::{JsonObject, Tool};
use serde_json::{Map, Value, json};

/// Rewrites a tool's input and output schemas (see the module docs).
pub fn make_portable(tool: &mut Tool) {
    let mut input = Value::Object((*tool.input_schema).clone());
    rewrite(&mut input);
    tool.input_schema = std::sync::Arc::new(compact_input(into_object(input)));
    if let Some(output) = &tool.output_schema {
        let mut output = Value::Object((**output).clone());
        rewrite(&mut output);
        tool.output_schema = Some(std::sync::Arc::new(compact_output(into_object(output))));
    }
}

fn into_object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn rewrite(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                rewrite(child);
            }
            split_type_array(map);
            drop_null_branches(map);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite),
        _ => {}
    }
}

/// `"type": [A, B, ...]` becomes one `type` (without `null`: absent means none), or `anyOf`
/// branches.
fn split_type_array(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else {
        return;
    };
    let mut types: Vec<Value> = types.clone();
    types.retain(|t| t != "null");
    map.remove("type");
    match types.as_slice() {
        [] => {}
        [single] => {
            map.insert("type".into(), single.clone());
        }
        _ => {
            let branches = types.into_iter().map(|t| json!({ "type": t })).collect();
            map.insert("anyOf".into(), Value::Array(branches));
        }
    }
}

/// An `anyOf`/`oneOf` loses its `{"type": "null"}` branches; one branch left is merged into the
/// property itself.
fn drop_null_branches(map: &mut Map<String, Value>) {
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get_mut(key) else {
            continue;
        };
        branches.retain(|b| b.get("type") != Some(&Value::from("null")));
        if branches.len() == 1 {
            let Some(Value::Object(branch)) = branches.pop() else {
                continue;
            };
            map.remove(key);
            for (k, v) in branch {
                map.entry(k).or_insert(v);
            }
        }
    }
}

/// An input schema without what carries no information for a model (see the module docs).
fn compact_input(mut schema: JsonObject) -> JsonObject {
    schema.remove("$schema");
    let defs = match schema.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let mut schema = Value::Object(schema);
    if inline_refs(&mut schema, &defs)
        && let Value::Object(map) = &mut schema
    {
        map.insert("$defs".into(), Value::Object(defs));
    }
    drop_noise(&mut schema);
    into_object(schema)
}

/// An output schema as a validating client walks it (see the module docs): every definition
/// inlined, enums as plain lists, no bounds, formats or `$schema`.
fn compact_output(mut schema: JsonObject) -> JsonObject {
    schema.remove("$schema");
    let mut defs = match schema.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    // Definitions that use others are resolved first (the result types are not recursive).
    for _ in 0..defs.len() {
        let snapshot = defs.clone();
        let mut value = Value::Object(std::mem::take(&mut defs));
        let left = inline_refs(&mut value, &snapshot);
        defs = into_object(value);
        if !left {
            break;
        }
    }
    let mut schema = Value::Object(schema);
    if inline_refs(&mut schema, &defs)
        && let Value::Object(map) = &mut schema
    {
        map.insert("$defs".into(), Value::Object(defs));
    }
    drop_noise(&mut schema);
    plain_output(&mut schema);
    // A nested object's fields are named plainly enough; the property holding it says what
    // it is.
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.values_mut().for_each(drop_nested_descriptions);
    }
    into_object(schema)
}

/// Drops the descriptions and `required` lists below a top-level property (its own
/// description stays): a nested object's fields are named plainly, and a client checking them
/// one by one gains nothing.
fn drop_nested_descriptions(property: &mut Value) {
    /// `schema` is a schema, or (`fields`) a `properties` map whose keys are field names.
    fn below(schema: &mut Value, fields: bool) {
        match schema {
            Value::Object(map) => {
                if !fields {
                    map.remove("description");
                    map.remove("required");
                }
                for (key, child) in map.iter_mut() {
                    below(child, !fields && key == "properties");
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| below(item, false)),
            _ => {}
        }
    }
    if let Value::Object(map) = property {
        for (key, child) in map.iter_mut() {
            match key.as_str() {
                "description" => {}
                "properties" => below(child, true),
                _ => below(child, false),
            }
        }
    }
}

/// `oneOf` of documented string constants becomes an `enum` list; bounds and
/// `additionalProperties: true` go (a result is never checked against them usefully).
fn plain_output(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let constants: Option<Vec<Value>> = match map.get("oneOf") {
                Some(Value::Array(branches)) => {
                    branches.iter().map(|b| b.get("const").cloned()).collect()
                }
                _ => None,
            };
            if let Some(constants) = constants {
                map.remove("oneOf");
                map.insert("type".into(), Value::from("string"));
                map.insert("enum".into(), Value::Array(constants));
            }
            for key in ["minimum", "maximum", "format"] {
                map.remove(key);
            }
            if map.get("additionalProperties") == Some(&Value::Bool(true)) {
                map.remove("additionalProperties");
            }
            map.values_mut().for_each(plain_output);
        }
        Value::Array(items) => items.iter_mut().for_each(plain_output),
        _ => {}
    }
}

/// The keys of a definition that document it rather than constrain it.
const DOC_KEYS: [&str; 2] = ["title", "description"];

/// Replaces each `{"$ref": "#/$defs/NAME", ...}` with the definition merged under the
/// property's own keys. A definition's `title` and `description` document the Rust type, not
/// the argument, so they stay behind. Definitions that refer to others are left as
/// references; returns whether any reference is left.
fn inline_refs(value: &mut Value, defs: &Map<String, Value>) -> bool {
    match value {
        Value::Object(map) => {
            let mut unresolved = false;
            let target = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|name| defs.get(name))
                .and_then(Value::as_object)
                .filter(|def| !def.contains_key("$ref") && !def.values().any(contains_ref));
            match target {
                Some(def) => {
                    map.remove("$ref");
                    let typing = def
                        .iter()
                        .filter(|(key, _)| !DOC_KEYS.contains(&key.as_str()));
                    for (key, child) in typing {
                        map.entry(key.clone()).or_insert_with(|| child.clone());
                    }
                }
                None => unresolved |= map.contains_key("$ref"),
            }
            for child in map.values_mut() {
                unresolved |= inline_refs(child, defs);
            }
            unresolved
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |left, item| inline_refs(item, defs) | left),
        _ => false,
    }
}

fn contains_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(contains_ref),
        Value::Array(items) => items.iter().any(contains_ref),
        _ => false,
    }
}

/// Drops `"default": null` and numeric `format`s, and joins the lines schemars keeps from a
/// doc comment's wrapping (a blank line, a paragraph break, stays).
fn drop_noise(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("default").is_some_and(Value::is_null) {
                map.remove("default");
            }
            let numeric = matches!(
                map.get("type").and_then(Value::as_str),
                Some("integer" | "number")
            );
            if numeric {
                map.remove("format");
            }
            if let Some(Value::String(text)) = map.get_mut("description") {
                *text = unwrap_lines(text);
            }
            map.values_mut().for_each(drop_noise);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_noise),
        _ => {}
    }
}

/// `text` with single line breaks turned into spaces.
fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| paragraph.split('\n').collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Every place in a schema where `type` is an array (the portability problem), as JSON paths.
pub fn type_arrays(schema: &Value, path: &str, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if map.get("type").is_some_and(Value::is_array) {
                found.push(path.to_owned());
            }
            for (key, child) in map {
                type_arrays(child, &format!("{path}.{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                type_arrays(item, &format!("{path}[{i}]"), found);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn portable(mut schema: Value) -> Value {
        rewrite(&mut schema);
        schema
    }

    #[test]
    fn absent_means_none_and_several_types_split_into_branches() {
        let nullable = json!({ "type": ["integer", "null"], "minimum": 1 });
        assert_eq!(
            portable(nullable),
            json!({ "type": "integer", "minimum": 1 })
        );
        let reference = json!({ "anyOf": [{ "$ref": "#/$defs/Flavor" }, { "type": "null" }], "description": "d" });
        assert_eq!(
            portable(reference),
            json!({ "$ref": "#/$defs/Flavor", "description": "d" })
        );
        let either = json!({ "type": ["integer", "string", "null"] });
        assert_eq!(
            portable(either),
            json!({ "anyOf": [{ "type": "integer" }, { "type": "string" }] })
        );
        let nested = json!({ "properties": { "a": { "items": { "type": ["string", "null"] } } } });
        let mut found = Vec::new();
        type_arrays(&portable(nested), "$", &mut found);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn inputs_lose_what_tells_a_model_nothing() {
        let mut schema = into_object(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "Lang": { "description": "def", "enum": ["python", "javascript"], "type": "string" },
                "Tree": { "properties": { "child": { "$ref": "#/$defs/Tree" } } }
            },
            "properties": {
                "language": { "$ref": "#/$defs/Lang", "description": "own" },
                "bare": { "$ref": "#/$defs/Lang" },
                "tree": { "$ref": "#/$defs/Tree" },
                "fuel": {
                    "type": "integer", "format": "uint64", "default": null,
                    "minimum": 1, "maximum": 9, "description": "Fuel, from 1\nto 9.\n\nMore."
                },
                "name": { "type": "string", "format": "hostname", "default": "x" }
            },
            "required": ["language"],
            "type": "object"
        }));
        schema = compact_input(schema);
        assert_eq!(
            Value::Object(schema),
            json!({
                "$defs": {
                    "Lang": { "description": "def", "enum": ["python", "javascript"], "type": "string" },
                    "Tree": { "properties": { "child": { "$ref": "#/$defs/Tree" } } }
                },
                "properties": {
                    "language": { "description": "own", "enum": ["python", "javascript"], "type": "string" },
                    "bare": { "enum": ["python", "javascript"], "type": "string" },
                    "tree": { "$ref": "#/$defs/Tree" },
                    "fuel": {
                        "type": "integer", "minimum": 1, "maximum": 9,
                        "description": "Fuel, from 1 to 9.\n\nMore."
                    },
                    "name": { "type": "string", "format": "hostname", "default": "x" }
                },
                "required": ["language"],
                "type": "object"
            })
        );
        let flat = compact_input(into_object(json!({
            "$defs": { "Lang": { "enum": ["a"], "type": "string" } },
            "properties": { "l": { "$ref": "#/$defs/Lang" } }
        })));
        assert!(!flat.contains_key("$defs"), "{flat:?}");
    }

    /// What the guard reads survives on the real tools, and nothing is left to resolve.
    #[test]
    fn real_input_schemas_are_compact_and_keep_their_bounds() {
        let tools = crate::server::SandboxServer::tool_router().list_all();
        for tool in &tools {
            let input = serde_json::to_string(&tool.input_schema).unwrap();
            for noise in ["$schema", "$defs", "$ref", "\"default\":null", "\"format\""] {
                assert!(!input.contains(noise), "{}: {noise} in {input}", tool.name);
            }
        }
        let create = tools.iter().find(|t| t.name == "create_session").unwrap();
        let fuel = &create.input_schema["properties"]["fuel_budget"];
        assert_eq!(fuel["type"], "integer");
        assert_eq!(fuel["minimum"], 1_000_000);
        assert_eq!(fuel["maximum"], 5_000_000_000_000_u64);
        assert_eq!(create.input_schema["required"], json!(["language"]));
        let language = &create.input_schema["properties"]["language"];
        assert_eq!(language["type"], "string");
        assert_eq!(language["enum"], json!(["python", "javascript"]));
    }

    /// Output schemas a validating client walks quickly: flat and plain (no `$ref`, no
    /// `oneOf`/`anyOf` for nullability, no formats or bounds), and small: execute_code's at most
    /// 3,000 bytes, all of them together at most 10,000.
    #[test]
    fn real_output_schemas_are_lean() {
        let tools = crate::server::SandboxServer::tool_router().list_all();
        let mut total = 0;
        let mut sizes = Vec::new();
        for tool in &tools {
            let Some(output) = &tool.output_schema else {
                continue;
            };
            let text = serde_json::to_string(output).unwrap();
            for noise in [
                "$ref", "$defs", "$schema", "oneOf", "\"null\"", "format", "minimum",
            ] {
                assert!(!text.contains(noise), "{}: {noise} in {text}", tool.name);
            }
            total += text.len();
            sizes.push((tool.name.to_string(), text.len()));
        }
        let size_of = |name: &str| sizes.iter().find(|(n, _)| n == name).map(|(_, s)| *s);
        let execute = size_of("execute_code").expect("execute_code has an output schema");
        assert!(
            execute <= 3_000,
            "execute_code's output schema: {execute} bytes; {sizes:?}"
        );
        assert_eq!(
            size_of("execute_command"),
            Some(execute),
            "one shape for both"
        );
        assert!(
            total <= 10_000,
            "all output schemas: {total} bytes; {sizes:?}"
        );
    }

    /// A required field of a result is never `null`: what may have nothing to say is left out
    /// of the result (and so is optional in its schema), because a client validating against
    /// the plain schema would reject a `null`.
    #[test]
    fn required_result_fields_are_never_nullable() {
        fn check(schema: &Value, path: &str, found: &mut Vec<String>) {
            let Some(map) = schema.as_object() else {
                return;
            };
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(Value::Object(properties)) = map.get("properties") {
                for (name, property) in properties {
                    if required.contains(&name.as_str()) && admits_null(property) {
                        found.push(format!("{path}.{name}"));
                    }
                    check(property, &format!("{path}.{name}"), found);
                }
            }
            for child in map.values() {
                if let Value::Object(defs) = child {
                    for (name, def) in defs {
                        check(def, &format!("{path}/{name}"), found);
                    }
                }
            }
        }
        fn admits_null(property: &Value) -> bool {
            let text = property.to_string();
            text.contains("\"null\"")
        }
        let raw = [
            (
                "execute_code",
                rmcp::handler::server::common::schema_for_output::<crate::report::ExecuteCodeResult>(
                ),
            ),
            (
                "create_session",
                rmcp::handler::server::common::schema_for_output::<
                    super::super::session_info::SessionInfo,
                >(),
            ),
            (
                "get_execution_guidance",
                rmcp::handler::server::common::schema_for_output::<
                    crate::guidance::ExecutionGuidance,
                >(),
            ),
        ];
        let mut found = Vec::new();
        for (name, schema) in raw {
            let schema = Value::Object((*schema).clone());
            check(&schema, name, &mut found);
        }
        assert!(found.is_empty(), "required but nullable: {found:?}");
    }

    /// What the Inspector's `--strict` check and Gemini-style clients reject, on the real tools.
    #[test]
    fn no_tool_schema_has_a_type_array() {
        let tools = crate::server::SandboxServer::tool_router().list_all();
        assert_eq!(tools.len(), crate::tools::ALL.len());
        let mut found = Vec::new();
        for tool in &tools {
            let input = Value::Object((*tool.input_schema).clone());
            type_arrays(&input, &format!("{}.inputSchema", tool.name), &mut found);
            if let Some(output) = &tool.output_schema {
                let output = Value::Object((**output).clone());
                type_arrays(&output, &format!("{}.outputSchema", tool.name), &mut found);
            }
        }
        assert!(found.is_empty(), "type arrays left: {found:#?}");
    }
}
