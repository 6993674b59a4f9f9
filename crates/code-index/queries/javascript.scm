; JavaScript (also the first half of the TypeScript and TSX queries).

; `Foo.prototype.bar = ...` defines the method `Foo.bar` (ES5 classes). Before the
; generic assignment pattern below, which would otherwise claim the same node.
((assignment_expression
  left: (member_expression
    object: (member_expression object: (identifier) @receiver property: (property_identifier) @_proto)
    property: (property_identifier) @name)) @definition.method
  (#eq? @_proto "prototype"))

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_expression name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class
(method_definition name: [(property_identifier) (private_property_identifier) (string) (computed_property_name)] @name) @definition.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(assignment_expression
  left: [(identifier) @name (member_expression property: (property_identifier) @name)]
  right: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(pair
  key: [(property_identifier) (string)] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
; Named object literals (`var api = { get() {} }`, `exports.config = {...}`): their
; members are qualified by the name.
(variable_declarator
  name: (identifier) @name
  value: (object [(pair) (method_definition) (shorthand_property_identifier)])) @definition.constant
(assignment_expression
  left: [(identifier) @name (member_expression property: (property_identifier) @name)]
  right: (object [(pair) (method_definition) (shorthand_property_identifier)])) @definition.constant
; The module pattern: a variable initialized by an immediately invoked function.
(variable_declarator
  name: (identifier) @name
  value: (call_expression function: [
    (function_expression)
    (parenthesized_expression [(function_expression) (arrow_function)])])) @definition.function
(variable_declarator
  name: (identifier) @name
  value: (parenthesized_expression (call_expression function: [(function_expression) (arrow_function)]))) @definition.function
; Top-level `const NAME = <not a function>` in UPPER_CASE.
(program (lexical_declaration "const" (variable_declarator name: (identifier) @name value: (_) @_v) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
(program (export_statement (lexical_declaration "const" (variable_declarator name: (identifier) @name value: (_)) @definition.constant))
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

(call_expression function: (identifier) @reference.call)
(call_expression function: (member_expression property: (property_identifier) @reference.member_call))
(new_expression constructor: (identifier) @reference.call)
(new_expression constructor: (member_expression property: (property_identifier) @reference.member_call))
(identifier) @reference.use
(property_identifier) @reference.use

(import_statement source: (string) @import.module) @import
(export_statement source: (string) @import.module) @import
((call_expression function: (identifier) @_req arguments: (arguments (string) @import.module)) @import
  (#eq? @_req "require"))
(call_expression function: (import) arguments: (arguments (string) @import.module)) @import

; ---- JavaScript only: TypeScript and TSX stop reading here. ----

(field_definition
  property: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.method
(class_heritage (identifier) @reference.type)
