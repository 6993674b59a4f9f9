; C#.

(class_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.record
(delegate_declaration name: (identifier) @name) @definition.type_alias
(namespace_declaration name: (_) @name) @definition.namespace
(file_scoped_namespace_declaration name: (_) @name) @definition.namespace
(method_declaration name: (identifier) @name) @definition.method
(local_function_statement name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.method
(destructor_declaration name: (identifier) @name) @definition.method
(operator_declaration operator: _ @name) @definition.method
(conversion_operator_declaration type: (_) @name) @definition.method
(property_declaration name: (identifier) @name) @definition.property
(indexer_declaration "this" @name) @definition.property
(event_declaration name: (identifier) @name) @definition.property
(event_field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.property
(field_declaration
  (modifier "const")
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.constant

(invocation_expression function: (identifier) @reference.call)
(invocation_expression function: (member_access_expression name: (identifier) @reference.member_call))
(invocation_expression function: (generic_name (identifier) @reference.call))
(invocation_expression function: (member_access_expression name: (generic_name (identifier) @reference.member_call)))
(object_creation_expression type: (identifier) @reference.call)
(object_creation_expression type: (generic_name (identifier) @reference.call))
(object_creation_expression type: (qualified_name name: (identifier) @reference.member_call))
(base_list (identifier) @reference.type)
(base_list (generic_name (identifier) @reference.type))
(identifier) @reference.use

; The last name is what is imported (`using IO = System.IO;` imports System.IO).
(using_directive (_) @import.module .) @import
