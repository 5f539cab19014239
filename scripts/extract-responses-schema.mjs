// Extracts the JSON Schema of the request body of `POST /responses` from OpenAI's
// OpenAPI spec (github.com/openai/openai-openapi, `openapi.json`) into
// test/fixtures/openapi/responses-create.schema.json, which the tests validate
// Mino's requests against (test/support/ResponsesSchema.ts). The fixture is
// committed: CI has no network. To regenerate it from a newer spec:
//
//   git -C openai-openapi show <commit>:openapi.json > /tmp/openapi.json
//   node scripts/extract-responses-schema.mjs --spec /tmp/openapi.json --commit <commit>
//
// The output keeps every schema the request body reaches, under `$defs`, with its
// `$ref`s rewritten to `#/$defs/...`. OpenAPI 3.1 schema objects are JSON Schema
// 2020-12 plus a few OpenAPI-isms, converted here (`conversions` below); any other
// keyword stops the script, so a new spec cannot slip something past the validator.
import { Buffer } from "node:buffer"
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { parseArgs } from "node:util"

const { values: args } = parseArgs({
  options: {
    spec: { type: "string" },
    commit: { type: "string" },
    repository: { type: "string", default: "openai/openai-openapi" },
    path: { type: "string", default: "openapi.json" },
    out: { type: "string", default: "test/fixtures/openapi/responses-create.schema.json" }
  }
})
if (args.spec === undefined || args.commit === undefined || !/^[0-9a-f]{40}$/.test(args.commit)) {
  console.error("usage: node scripts/extract-responses-schema.mjs --spec <openapi.json> --commit <40-hex commit> [--repository owner/name] [--path path/in/repo] [--out file]")
  process.exit(2)
}

const text = readFileSync(args.spec, "utf8")
// The repository publishes the same spec as JSON beside the YAML; JSON needs no parser dependency.
const spec = JSON.parse(text)
// Git's blob id of the file, so a reader can check it is the one at that commit (`git ls-tree <commit>`).
const blob = createHash("sha1").update(`blob ${Buffer.byteLength(text)}\0`).update(text).digest("hex")

const components = spec.components?.schemas ?? {}
const COMPONENT = "#/components/schemas/"
const requestSchema = spec.paths?.["/responses"]?.post?.requestBody?.content?.["application/json"]?.schema
if (typeof requestSchema?.$ref !== "string" || !requestSchema.$ref.startsWith(COMPONENT)) {
  throw new Error("the spec has no `POST /responses` request body given as a component $ref")
}
const root = requestSchema.$ref.slice(COMPONENT.length)

// Keywords whose value is a schema, an array of schemas, or a map of schemas.
const SCHEMA = new Set(["items", "additionalProperties", "not", "propertyNames", "contains", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems"])
const SCHEMA_ARRAY = new Set(["allOf", "anyOf", "oneOf", "prefixItems"])
const SCHEMA_MAP = new Set(["properties", "patternProperties", "dependentSchemas"])
// JSON Schema 2020-12 keywords whose value is data (or an annotation), copied as is.
const DATA = new Set([
  "type", "enum", "const", "required", "default", "examples", "title", "description", "deprecated", "readOnly", "writeOnly",
  "format", "pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
  "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "dependentRequired", "$comment"
])

// What each OpenAPI-ism became, counted, for the fixture's $comment.
const conversions = {
  "discriminator (oneOf beside it becomes anyOf)": 0,
  "discriminator with no oneOf beside it (dropped)": 0,
  "nullable: true (becomes anyOf [schema, {type: null}])": 0,
  "$recursiveRef: # (becomes $ref to its component)": 0,
  "example (becomes examples: [value])": 0,
  "x-* vendor extensions, xml, externalDocs (dropped)": 0
}
const referenced = new Set([root])
const pending = [root]

/** The 2020-12 form of one schema of component `name`. */
const convert = (schema, name, where) => {
  if (typeof schema === "boolean") return schema
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) throw new Error(`${where}: not a schema`)
  const out = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$ref") {
      if (typeof value !== "string" || !value.startsWith(COMPONENT)) throw new Error(`${where}: unsupported $ref ${JSON.stringify(value)}`)
      const target = value.slice(COMPONENT.length)
      if (!(target in components)) throw new Error(`${where}: $ref to a missing component ${target}`)
      if (!referenced.has(target)) {
        referenced.add(target)
        pending.push(target)
      }
      out.$ref = `#/$defs/${target}`
    } else if (key === "$recursiveRef") {
      // Draft 2019-09 recursion; here it always means "this component again".
      if (value !== "#" || schemaOf(name).$recursiveAnchor !== true) throw new Error(`${where}: unsupported $recursiveRef`)
      conversions["$recursiveRef: # (becomes $ref to its component)"]++
      out.$ref = `#/$defs/${name}`
    } else if (key === "$recursiveAnchor") {
      // Consumed by the $recursiveRef above.
    } else if (key === "discriminator") {
      // OpenAPI picks the branch by the tag; JSON Schema's oneOf demands that exactly
      // one branch matches, and these branches overlap (a user message with a content
      // list is both an EasyInputMessage and an InputMessage). anyOf is the reading
      // that accepts what the API accepts; each branch still checks its own tag.
      // One stray discriminator sits on an array schema, with no branches to pick among.
      conversions[schema.oneOf === undefined ? "discriminator with no oneOf beside it (dropped)" : "discriminator (oneOf beside it becomes anyOf)"]++
    } else if (key === "nullable") {
      // OpenAPI 3.0's nullable; 3.1 specs use {type: "null"}, handled after the loop.
    } else if (key === "example") {
      conversions["example (becomes examples: [value])"]++
      out.examples = [value]
    } else if (key.startsWith("x-") || key === "xml" || key === "externalDocs") {
      conversions["x-* vendor extensions, xml, externalDocs (dropped)"]++
    } else if (SCHEMA.has(key)) {
      out[key] = convert(value, name, `${where}/${key}`)
    } else if (SCHEMA_ARRAY.has(key)) {
      const target = key === "oneOf" && schema.discriminator !== undefined ? "anyOf" : key
      if (key === "oneOf" && target === "anyOf" && schema.anyOf !== undefined) throw new Error(`${where}: discriminated oneOf beside anyOf`)
      out[target] = value.map((branch, index) => convert(branch, name, `${where}/${key}/${index}`))
    } else if (SCHEMA_MAP.has(key)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([property, sub]) => [property, convert(sub, name, `${where}/${key}/${property}`)]))
    } else if (DATA.has(key)) {
      out[key] = value
    } else {
      throw new Error(`${where}: unknown keyword ${JSON.stringify(key)}; teach the script what it means`)
    }
  }
  if (schema.nullable === true) {
    conversions["nullable: true (becomes anyOf [schema, {type: null}])"]++
    return { anyOf: [out, { type: "null" }] }
  }
  return out
}

const schemaOf = (name) => components[name]

const defs = {}
while (pending.length > 0) {
  const name = pending.pop()
  defs[name] = convert(schemaOf(name), name, `#/components/schemas/${name}`)
}
const sorted = Object.fromEntries(Object.keys(defs).sort().map((name) => [name, defs[name]]))

const applied = Object.entries(conversions).filter(([, count]) => count > 0).map(([what, count]) => `${what} x${count}`)
const fixture = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $comment: [
    `The request body of POST /responses: components.schemas.${root} and the ${Object.keys(defs).length - 1} schemas it reaches,`,
    `from https://github.com/${args.repository}, file ${args.path} (OpenAPI ${spec.openapi}, API version ${spec.info?.version}),`,
    `commit ${args.commit} (git blob ${blob}).`,
    `Extracted by scripts/extract-responses-schema.mjs: $refs rewritten to #/$defs/...; OpenAPI-isms converted: ${applied.join("; ") || "none"}.`,
    "Do not edit by hand; regenerate with the script."
  ].join(" "),
  $ref: `#/$defs/${root}`,
  $defs: sorted
}
mkdirSync(dirname(args.out), { recursive: true })
writeFileSync(args.out, `${JSON.stringify(fixture, null, 2)}\n`)
console.log(`${args.out}: ${Object.keys(defs).length} schemas, ${Buffer.byteLength(JSON.stringify(fixture, null, 2))} bytes; ${applied.join("; ")}`)
