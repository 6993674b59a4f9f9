; Go. A method's receiver type (@receiver) qualifies its name: `Server.Serve`.

(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @receiver
    (pointer_type (type_identifier) @receiver)
    (generic_type type: (type_identifier) @receiver)
    (pointer_type (generic_type type: (type_identifier) @receiver))
  ]))
  name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name type: [
  (type_identifier) (qualified_type) (pointer_type) (slice_type) (map_type) (array_type)
  (function_type) (channel_type) (generic_type)]) @definition.type_alias
(type_alias name: (type_identifier) @name) @definition.type_alias
(method_elem name: (field_identifier) @name) @definition.method
(const_spec name: (identifier) @name) @definition.constant

(call_expression function: (identifier) @reference.call)
(call_expression function: (selector_expression field: (field_identifier) @reference.member_call))
(composite_literal type: (type_identifier) @reference.call)
(type_identifier) @reference.type
(identifier) @reference.use
(field_identifier) @reference.use

(import_spec path: (_) @import.module) @import
