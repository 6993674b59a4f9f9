; C++. Out-of-line member definitions (`void Foo::bar() {}`) are qualified by their
; scope (@receiver), like Go methods.

(function_definition
  declarator: [
    (function_declarator declarator: [(identifier) (field_identifier) (operator_name) (destructor_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (operator_name)] @name))
  ]) @definition.function
(function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier scope: (_) @receiver name: [(identifier) (operator_name) (destructor_name)] @name))
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier scope: (_) @receiver name: [(identifier) (operator_name) (destructor_name)] @name)))
    (reference_declarator (function_declarator declarator: (qualified_identifier scope: (_) @receiver name: [(identifier) (operator_name) (destructor_name)] @name)))
  ]) @definition.method
(template_declaration (function_definition
  declarator: (function_declarator declarator: (qualified_identifier scope: (_) @receiver name: (identifier) @name))) @definition.method)
; In-class declarations of methods (bodies elsewhere) count as declarations of members.
(field_declaration_list (field_declaration declarator: (function_declarator declarator: [(field_identifier) (operator_name) (destructor_name)] @name)) @definition.method)
(field_declaration_list (declaration declarator: (function_declarator declarator: [(identifier) (destructor_name) (operator_name)] @name)) @definition.method)
(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace
(type_definition declarator: (type_identifier) @name) @definition.type_alias
(alias_declaration name: (type_identifier) @name) @definition.type_alias
(concept_definition name: (identifier) @name) @definition.type_alias
(preproc_function_def name: (identifier) @name) @definition.macro
(preproc_def name: (identifier) @name) @definition.constant

(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (field_identifier) @reference.call))
(call_expression function: (qualified_identifier name: (identifier) @reference.call))
(call_expression function: (template_function name: (identifier) @reference.call))
(new_expression type: (type_identifier) @reference.call)
(type_identifier) @reference.type
(identifier) @reference.use
(field_identifier) @reference.use

(preproc_include path: (_) @import.module) @import
(using_declaration (_) @import.module) @import
