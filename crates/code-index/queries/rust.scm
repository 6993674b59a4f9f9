; Rust definitions, references and imports.
; Captures: @definition.<kind> (whole node) with @name; @scope with @name qualifies
; nested definitions without being one (impl blocks); @reference.<kind> on the name
; node; @import on the whole statement with @import.module.

(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.union
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(mod_item name: (identifier) @name) @definition.module
(type_item name: (type_identifier) @name) @definition.type_alias
(associated_type name: (type_identifier) @name) @definition.type_alias
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(macro_definition name: (identifier) @name) @definition.macro

(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
  ]) @scope

(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (field_identifier) @reference.member_call))
(call_expression function: (scoped_identifier name: (identifier) @reference.member_call))
(call_expression function: (generic_function function: (identifier) @reference.call))
(call_expression function: (generic_function function: (scoped_identifier name: (identifier) @reference.member_call)))
(call_expression function: (generic_function function: (field_expression field: (field_identifier) @reference.member_call)))
(macro_invocation macro: (identifier) @reference.call)
(struct_expression name: (type_identifier) @reference.call)
(struct_expression name: (scoped_type_identifier name: (type_identifier) @reference.member_call))
(type_identifier) @reference.type
(identifier) @reference.use
(field_identifier) @reference.use

(use_declaration argument: (_) @import.module) @import
(extern_crate_declaration name: (identifier) @import.module) @import
(mod_item name: (identifier) @import.module !body) @import
