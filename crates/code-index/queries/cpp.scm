; C++. Out-of-line member definitions (`void Foo::bar() {}`) are qualified by their
; scope, like Go methods. Export and annotation macros (`class LEVELDB_EXPORT Cache`,
; `void Lock() EXCLUSIVE_LOCK_FUNCTION() {`) are masked before parsing: see `mask_macros`.

; Function names are found in code by walking the declarator (pointers, references,
; parentheses, qualified names such as `Foo<T>::Bar::baz`): see `resolve_declarator`.
; A qualified name makes a method with the scope as receiver.
(function_definition declarator: (_) @declarator) @definition.function
; In-class declarations of methods (bodies elsewhere) are definitions of members.
(field_declaration_list (field_declaration declarator: (_) @declarator) @definition.method)
(field_declaration_list (declaration declarator: (_) @declarator) @definition.method)
(class_specifier name: [(type_identifier) (qualified_identifier)] @name body: (_)) @definition.class
(struct_specifier name: [(type_identifier) (qualified_identifier)] @name body: (_)) @definition.struct
; Partial and explicit specializations (`struct type_caster<std::vector<T>> {..}`): named
; by their template, as ctags names them.
(class_specifier name: (template_type name: (type_identifier) @name) body: (_)) @definition.class
(struct_specifier name: (template_type name: (type_identifier) @name) body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: [(type_identifier) (qualified_identifier)] @name body: (_)) @definition.enum
(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace
(type_definition declarator: (_) @declarator) @definition.type_alias
(alias_declaration name: (type_identifier) @name) @definition.type_alias
(concept_definition name: (identifier) @name) @definition.type_alias
(preproc_function_def name: (identifier) @name) @definition.macro
(preproc_def name: (identifier) @name) @definition.constant

(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (field_identifier) @reference.member_call))
(call_expression function: (qualified_identifier name: (identifier) @reference.member_call))
(call_expression function: (qualified_identifier name: (qualified_identifier name: (identifier) @reference.member_call)))
(call_expression function: (qualified_identifier name: (qualified_identifier name: (qualified_identifier name: (identifier) @reference.member_call))))
(call_expression function: (template_function name: (identifier) @reference.call))
(call_expression function: (qualified_identifier name: (template_function name: (identifier) @reference.member_call)))
(call_expression function: (qualified_identifier name: (qualified_identifier name: (template_function name: (identifier) @reference.member_call))))
(call_expression function: (qualified_identifier name: (qualified_identifier name: (qualified_identifier name: (template_function name: (identifier) @reference.member_call)))))
(call_expression function: (field_expression field: (template_method name: (field_identifier) @reference.member_call)))
(new_expression type: (type_identifier) @reference.call)
(type_identifier) @reference.type
(identifier) @reference.use
(field_identifier) @reference.use

(preproc_include path: (_) @import.module) @import
(using_declaration (_) @import.module) @import
