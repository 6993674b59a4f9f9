; Python. Methods are functions whose nearest container is a class (decided in code).

(function_definition name: (identifier) @name) @definition.function
(class_definition name: (identifier) @name) @definition.class
; Module-level constants: NAME = ... in UPPER_CASE (PEP 8), and annotated ones.
(module (expression_statement (assignment left: (identifier) @name) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(call function: (identifier) @reference.call)
(call function: (attribute attribute: (identifier) @reference.member_call))
(decorator (identifier) @reference.call)
(decorator (attribute attribute: (identifier) @reference.member_call))
(decorator (call function: (identifier) @reference.call))
(decorator (call function: (attribute attribute: (identifier) @reference.member_call)))
(class_definition superclasses: (argument_list (identifier) @reference.type))
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @reference.type)))
(type (identifier) @reference.type)
(identifier) @reference.use

(import_statement name: (dotted_name) @import.module) @import
(import_statement name: (aliased_import name: (dotted_name) @import.module)) @import
(import_from_statement module_name: (_) @import.module) @import
(future_import_statement) @import
