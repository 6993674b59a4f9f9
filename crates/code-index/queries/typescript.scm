; TypeScript-only constructs (the JavaScript query is prepended at load time).

(function_signature name: (identifier) @name) @definition.function
(method_signature name: [(property_identifier) (private_property_identifier) (string)] @name) @definition.method
(construct_signature "new" @name) @definition.method
(abstract_method_signature name: [(property_identifier) (private_property_identifier) (string)] @name) @definition.method
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(type_alias_declaration name: (type_identifier) @name) @definition.type_alias
(module name: [(identifier) (string) (nested_identifier)] @name) @definition.module
(internal_module name: [(identifier) (nested_identifier)] @name) @definition.namespace
(public_field_definition
  name: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.method

(type_identifier) @reference.type
(implements_clause (type_identifier) @reference.type)
(extends_clause value: (identifier) @reference.type)

(import_alias (identifier) @import.module) @import
