; Java.

(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.record
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(compact_constructor_declaration name: (identifier) @name) @definition.method
(annotation_type_element_declaration name: (identifier) @name) @definition.method
; Enum constants with a body are anonymous classes with methods.
(enum_constant name: (identifier) @name body: (class_body)) @definition.constant
(field_declaration
  (modifiers "static" "final")
  declarator: (variable_declarator name: (identifier) @name)) @definition.constant
(interface_body (constant_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.constant)

(method_invocation name: (identifier) @reference.call)
(object_creation_expression type: (type_identifier) @reference.call)
(object_creation_expression type: (generic_type (type_identifier) @reference.call))
(method_reference (identifier) @reference.call .)
(type_identifier) @reference.type
(identifier) @reference.use

(import_declaration [(scoped_identifier) (identifier)] @import.module) @import
(package_declaration [(scoped_identifier) (identifier)] @import.module) @import.package
