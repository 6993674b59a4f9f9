; C. Definitions only (prototypes are not definitions, as in ctags' default).

; Function names are found in code by walking the declarator (pointers, parentheses).
(function_definition declarator: (_) @declarator) @definition.function
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition declarator: (_) @declarator) @definition.type_alias
(preproc_function_def name: (identifier) @name) @definition.macro
(preproc_def name: (identifier) @name) @definition.constant

(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (field_identifier) @reference.member_call))
(type_identifier) @reference.type
(identifier) @reference.use
(field_identifier) @reference.use

(preproc_include path: (_) @import.module) @import
