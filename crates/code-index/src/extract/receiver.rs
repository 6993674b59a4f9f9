//! The type of a member call's receiver, as far as the file itself says.
//!
//! `linter.check()` names a method `check`, but of which class? Without this, the
//! call graph can only guess by name, and a same-file `check` of an unrelated class
//! wins. Here a receiver gets a type name when the code states it nearby:
//!
//! - the receiver is a type (or a path ending in one): `Foo.make()`, `Foo::new()`,
//!   `mod.Foo.make()`; an identifier counts as a type when it starts with an
//!   uppercase letter and is not ALL_CAPS (a constant); or it constructs one:
//!   `Foo().run()`, `new Foo().run()`, `Foo::new().run()`;
//! - a variable of an enclosing function (or the module) annotated or constructed
//!   with a type: `linter: PyLinter`, `l: &mut Linter`, `x = Foo()`,
//!   `const x = new Foo()`, `let x = Foo::new()`, `let x: Foo = ...`;
//! - a field of the enclosing class: `self.l = Linter()`, `l: Linter` in the
//!   class body (Python), `l: Linter;`, `p = new P()`, `this.l = new L()` (TS/JS);
//! - a variable set from a free function (`x = make_linter()`, `let s =
//!   store::open()?`, `const c = await load()`): the "type" is then
//!   `make_linter()` or `open()?`, and the call graph reads the function's declared
//!   return type ([`return_type`]), since the function may live in another file;
//! - likewise a method called on a receiver typed here, or on `self`, or without a
//!   receiver in Java and C#: `r = linter.reader()`, `self.reader().next()`,
//!   `var r = reader();` give `Linter.reader()`, `Runner.reader()` (the call graph
//!   looks the method up in that class and its bases), up to [`MAX_CHAIN`] calls in
//!   a row; Go's `store.Open()` of an imported package stays `store.Open()`. A
//!   variable's values are typed when it is first asked for, so `r = f.reader()`
//!   can use what another line says of `f`;
//! - in Java, C# and Go, what is declared: locals, parameters, `for` variables,
//!   fields and properties (which Java and C# methods name without `this.`),
//!   `var x = new Foo()`, Go's method receivers, `x := &Foo{}` and `x, err :=
//!   NewFoo()` (the function's first declared result);
//! - in C++ likewise: declared locals, parameters, range-`for` variables and the
//!   fields of a class body the method is written in; `auto` from `new Foo(..)`,
//!   `Foo(..)`, `std::make_unique<Foo>(..)` or a call; `Foo::Create()` is a static
//!   method of `Foo`. An out-of-line method (`void DBImpl::Write()`) knows its
//!   class by name only, so the fields a header declares (`mem_->Add()`) stay
//!   untyped (those of a class in the same file do not, see below);
//! - a field of a class (Go, Rust: a struct) this file defines, on a receiver
//!   typed here: `l.store.Flush()`, `self.linter.reporter.emit()`, Rust's
//!   `self.cache.get()` in an `impl` of the struct, and C++'s
//!   out-of-line `mem_->Add()` when the class is in the same file. A name the
//!   file defines twice is not looked into.
//!
//! No flow analysis: a variable bound to two different types has none. The answer is
//! a name only (`PyLinter`, not a definition); the call graph decides what it means.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::{imports::import_names, lang::Language};

/// Per-file memo of each scope's bindings (variable, or `self.` field → what binds
/// it) and of the types they come to.
///
/// Scopes come from the caller's walk (functions and classes containing the call,
/// outermost first): `Node::parent` searches down from the root each time, too
/// slow to call per reference.
pub(super) struct Receivers<'s, 't> {
    lang: Language,
    src: &'s [u8],
    root: Node<'t>,
    /// Keyed by (scope node, whether its `self.` fields or its variables).
    scopes: HashMap<(usize, bool), HashMap<String, Vec<Bound<'t>>>>,
    /// Per scope (as `scopes`), each variable's type, `None` when its bindings
    /// disagree or say nothing.
    resolved: HashMap<(usize, bool), HashMap<String, Option<String>>>,
    /// The variables being typed: `x = x.next()` reads `x` while typing it.
    resolving: HashSet<(usize, bool, String)>,
    /// Go: the names the file's imports bind, read when first needed.
    go_packages: Option<HashSet<String>>,
    /// The classes (Go: struct types) this file defines, by name, read when
    /// first needed.
    classes: Option<HashMap<String, Node<'t>>>,
    /// How many calls deep the receiver being typed is (see [`MAX_CHAIN`]).
    depth: usize,
}

/// What one binding says of a variable's type.
#[derive(Clone)]
enum Bound<'t> {
    /// An annotation or a declaration (`None`: a binding that says nothing, like an
    /// untyped parameter).
    Stated(Option<String>),
    /// A value, typed when the variable is first asked for: `r = f.reader()` needs
    /// the type of `f`, which another binding of the same scope may give.
    Value(Node<'t>),
}

/// A receiver written as a chain of calls (`make().reader().next()`), directly or
/// through variables, stops being typed past this many calls: a builder chain
/// would cost its length squared, and a generated one of thousands could overflow
/// the stack.
const MAX_CHAIN: usize = 4;

impl<'s, 't> Receivers<'s, 't> {
    pub(super) fn new(lang: Language, src: &'s [u8], root: Node<'t>) -> Self {
        Receivers {
            lang,
            src,
            root,
            scopes: HashMap::new(),
            resolved: HashMap::new(),
            resolving: HashSet::new(),
            go_packages: None,
            classes: None,
            depth: 0,
        }
    }

    /// Whether receivers get types in this language at all.
    pub(super) fn supported(lang: Language) -> bool {
        matches!(
            lang,
            Language::Python
                | Language::JavaScript
                | Language::TypeScript
                | Language::Tsx
                | Language::Rust
                | Language::Go
                | Language::Java
                | Language::CSharp
                | Language::Cpp
        )
    }

    fn text(&self, node: Node<'_>) -> &'s str {
        std::str::from_utf8(&self.src[node.byte_range()]).unwrap_or("")
    }

    /// The type name of a member call's `receiver`; `open` holds the scopes
    /// ([`is_scope`]) containing the call, outermost first.
    pub(super) fn type_of(&mut self, receiver: Node<'t>, open: &[Node<'t>]) -> Option<String> {
        if !Self::supported(self.lang) {
            return None;
        }
        match receiver.kind() {
            // Only inside a chain (`self.reader().next()`): a call on `self` itself
            // is a self call.
            // (Rust's `self` is its own node, of the `impl` block's type.)
            "this" | "this_expression" | "self" => self.class_name(open),
            "identifier" if self.lang == Language::Python && is_self(self.text(receiver)) => {
                self.class_name(open)
            }
            // C++'s `std::move(x)`, `std::sort(..)`: the standard library's, which
            // a program may not add to, whatever functions of those names the
            // project has. (Other namespaces may be the project's, or aliases of
            // its namespaces: `namespace ll = leveldb;`.)
            "namespace_identifier"
                if self.lang == Language::Cpp && self.text(receiver) == "std" =>
            {
                Some("std".to_owned())
            }
            // (C++'s `Status::OK()`: the scope is a `namespace_identifier`.)
            "identifier" | "type_identifier" | "namespace_identifier" => {
                let var = self.text(receiver);
                // C# properties and fields, and Go's exported variables, are
                // spelled like types: a binding in scope comes first there.
                let capitalized_variables = matches!(self.lang, Language::CSharp | Language::Go);
                if is_type_name(var) && !capitalized_variables {
                    return Some(var.to_owned());
                }
                match self.variable(var, open) {
                    Some(bound) => bound,
                    None if is_type_name(var) => Some(var.to_owned()),
                    // C++'s `log::flush()`, `db::impl::open()`: the scope, whole, as
                    // written (a namespace, or a class named in lower case), with
                    // `::` to tell it from a type; the call graph looks for a
                    // definition qualified by it.
                    None if self.lang == Language::Cpp
                        && receiver.kind() == "namespace_identifier" =>
                    {
                        Some(format!("{}::", cpp_scope(self.text(receiver_scope(receiver)))))
                    }
                    // C++'s out-of-line method naming a field of its class (`mem_`),
                    // when the class is defined in this file.
                    None if self.lang == Language::Cpp
                        && !open.iter().any(|n| is_class(n.kind()))
                        && let Some(class) = self.class_name(open)
                        && let Some(t) = self.field_of(&class, var) =>
                    {
                        Some(t)
                    }
                    // Go: a package the file imports (`store.Open()`), named as
                    // itself; the call graph looks in the packages imported.
                    None if self.lang == Language::Go && self.imports_go_package(var) => {
                        Some(var.to_owned())
                    }
                    // `console.log()`: the runtime's objects, named as themselves.
                    None => is_js_global(self.lang, var).then(|| var.to_owned()),
                }
            }
            // `crate::m::Foo::new()`, `mod.Foo.make()`, `self.l.check()`.
            "scoped_identifier"
            | "attribute"
            | "member_expression"
            | "field_expression"
            | "field_access"
            | "member_access_expression"
            | "selector_expression" => {
                if let Some(field) = self.self_field(receiver) {
                    let field = self.text(field);
                    return match open.iter().rposition(|n| is_class(n.kind())) {
                        Some(class) => {
                            self.lookup(open[class], true, field, &open[..=class]).flatten()
                        }
                        // C++'s out-of-line `this->mem_`: its class, if in this file.
                        None => self.field_of(&self.class_name(open)?, field),
                    };
                }
                let last = receiver.child(receiver.child_count().checked_sub(1)?)?;
                let name = self.text(last);
                if is_type_name(name) && self.lang != Language::Go {
                    return Some(name.to_owned());
                }
                // `l.store`, `self.linter.reporter`: a field of a class this file
                // defines, as its body declares it.
                let (object, field) = member_parts(receiver)?;
                let owner = self.type_of_deeper(object, open)?;
                self.field_of(&owner, self.text(field))
            }
            // `Foo().run()`, `new Foo().run()`, `Foo::new().run()`, `make().run()`,
            // `f.reader().next()`.
            "call"
            | "call_expression"
            | "method_invocation"
            | "invocation_expression"
            | "new_expression"
            | "object_creation_expression"
            | "composite_literal" => self.constructed(receiver, open),
            _ => None,
        }
        .filter(|t| t != "Self")
    }

    /// A variable's type: the innermost enclosing function (or the module) that
    /// binds it decides; in Java and C#, where a method names its class's fields
    /// without `this.`, the enclosing classes' fields come before the module.
    /// `None` if nothing binds it.
    fn variable(&mut self, var: &str, open: &[Node<'t>]) -> Option<Option<String>> {
        for (i, &scope) in open.iter().enumerate().rev() {
            if is_function(scope.kind())
                && let Some(t) = self.lookup(scope, false, var, &open[..=i])
            {
                return Some(t);
            }
        }
        if declares_fields(self.lang) {
            for (i, &class) in open.iter().enumerate().rev() {
                if is_class(class.kind())
                    && let Some(t) = self.lookup(class, true, var, &open[..=i])
                {
                    return Some(t);
                }
            }
        }
        self.lookup(self.root, false, var, &[])
    }

    /// The type `scope` gives `var` (one of its `self.` fields with `fields`): what
    /// its bindings agree on, `Some(None)` if they disagree or say nothing, `None`
    /// if it binds no such name. `open` holds `scope` and the scopes around it,
    /// where the values bound are typed.
    fn lookup(
        &mut self,
        scope: Node<'t>,
        fields: bool,
        var: &str,
        open: &[Node<'t>],
    ) -> Option<Option<String>> {
        let scope_key = (scope.id(), fields);
        if let Some(t) = self.resolved.get(&scope_key).and_then(|vars| vars.get(var)) {
            return Some(t.clone());
        }
        let bounds = self.bindings(scope, fields).get(var)?.clone();
        let key = (scope_key.0, fields, var.to_owned());
        if !self.resolving.insert(key.clone()) {
            return Some(None);
        }
        let mut agreed: Option<Option<String>> = None;
        for bound in bounds {
            let t = match bound {
                Bound::Stated(t) => t,
                Bound::Value(value) => self.constructed(value, open),
            };
            agreed = Some(match agreed {
                Some(prev) if prev != t => None,
                _ => t,
            });
            if agreed == Some(None) {
                break;
            }
        }
        self.resolving.remove(&key);
        let t = agreed.flatten();
        self.resolved.entry(scope_key).or_default().insert(key.2, t.clone());
        Some(t)
    }

    fn bindings(&mut self, scope: Node<'t>, fields: bool) -> &HashMap<String, Vec<Bound<'t>>> {
        let id = scope.id();
        let key = (id, fields);
        if !self.scopes.contains_key(&key) {
            let mut out: HashMap<String, Vec<Bound<'t>>> = HashMap::new();
            // (node, its parent, whether it sits directly in a class body: the body
            // block, its statements, their assignments)
            let mut stack = vec![(scope, None, false)];
            let mut walk = scope.walk();
            let mut bind = |var: &str, bound: Bound<'t>| {
                let all = out.entry(var.to_owned()).or_default();
                let repeated = |b: &Bound<'t>| match (b, &bound) {
                    (Bound::Stated(a), Bound::Stated(b)) => a == b,
                    _ => false,
                };
                if !all.iter().any(repeated) {
                    all.push(bound);
                }
            };
            let mut found = Vec::new();
            while let Some((node, parent, class_level)) = stack.pop() {
                self.binding(node, parent, class_level, fields, &mut found);
                for (var, ty) in found.drain(..) {
                    bind(var, ty);
                }
                // `import os`, `from shop import cart as c`, `import * as fs from
                // 'fs'`: the module (or whatever was imported) under its local name,
                // which the call graph knows as an import (`os.getcwd()` is not
                // ours, `c.total()` is `total` in `shop/cart.py`).
                let imported = match (self.lang, node.kind()) {
                    _ if fields => Vec::new(),
                    (Language::Python, "import_statement" | "import_from_statement") => {
                        import_names(Language::Python, self.text(node))
                    }
                    (
                        Language::JavaScript | Language::TypeScript | Language::Tsx,
                        "import_statement",
                    ) => import_names(self.lang, self.text(node)),
                    _ => Vec::new(),
                };
                for (_, local) in imported {
                    if !local.contains('.') {
                        bind(&local, Bound::Stated(Some(local.clone())));
                    }
                }
                let kind = node.kind();
                let children_class_level = node.id() == id
                    || (class_level && matches!(kind, "block" | "expression_statement"));
                for child in node.children(&mut walk) {
                    // A function's variables are its own; a class's fields are set
                    // in its methods, but not in a nested class.
                    // (Java, C# and Go declare fields in the class body, never in a
                    // method.)
                    let nested = is_class(child.kind())
                        || ((!fields || declares_fields(self.lang)) && is_function(child.kind()));
                    // Leaves bind only as untyped parameters.
                    let leaf = child.child_count() == 0 && !is_parameter_list(kind);
                    if !nested && !leaf && !binds_nothing(child.kind()) {
                        stack.push((child, Some(node), children_class_level));
                    }
                }
            }
            self.scopes.insert(key, out);
        }
        &self.scopes[&key]
    }

    /// What `node` binds, pushed to `out`: variables (or fields) and their types,
    /// `None` when the binding says nothing of the type (`x = load()`, an untyped
    /// parameter): that variable then has no single stated type in the scope.
    fn binding(
        &self,
        node: Node<'t>,
        parent: Option<Node<'t>>,
        class_level: bool,
        fields: bool,
        out: &mut Vec<(&'s str, Bound<'t>)>,
    ) -> Option<()> {
        let field = |n: &str| node.child_by_field_name(n);
        let parent_kind = parent.map_or("", |p| p.kind());
        // The annotation if any, else what the value constructs or returns.
        let typed = |ty: Option<Node<'t>>, value: Option<Node<'t>>| match ty {
            // Java's `var`, C#'s `var` (`implicit_type`): what the value constructs.
            Some(t) if t.kind() != "implicit_type" && !matches!(self.text(t), "var" | "auto") => {
                Bound::Stated(self.type_name(t))
            }
            _ => value.map_or(Bound::Stated(None), Bound::Value),
        };
        let mut push = |var: Node<'_>, ty: Bound<'t>| {
            if matches!(var.kind(), "identifier" | "property_identifier" | "field_identifier") {
                out.push((self.text(var), ty));
            }
        };
        let (var, ty) = match (self.lang, node.kind()) {
            // C++: `Status s;`, `Foo* p = new Foo(..)`, `auto it = make()`, `const
            // Options& o` (a parameter), `Foo f_;` in a class body, `for (auto& x :
            // xs)`. Only declarations are read, as in Java.
            (Language::Cpp, "field_declaration") if fields => {
                let ty = field("type");
                let mut walk = node.walk();
                for d in node.children_by_field_name("declarator", &mut walk) {
                    if let Some(name) = declared_name(d) {
                        push(name, typed(ty, None));
                    }
                }
                return Some(());
            }
            (Language::Cpp, _) if fields => return None,
            (Language::Cpp, "declaration") => {
                let ty = field("type");
                let mut walk = node.walk();
                for d in node.children_by_field_name("declarator", &mut walk) {
                    // `Foo f(1, 2);`, `Foo f{1};` construct the declared type.
                    let value = (d.kind() == "init_declarator")
                        .then(|| d.child_by_field_name("value"))
                        .flatten()
                        .filter(|v| !matches!(v.kind(), "argument_list" | "initializer_list"));
                    if let Some(name) = declared_name(d) {
                        push(name, typed(ty, value));
                    }
                }
                return Some(());
            }
            (
                Language::Cpp,
                "parameter_declaration" | "optional_parameter_declaration" | "for_range_loop",
            ) => (declared_name(field("declarator")?)?, typed(field("type"), None)),
            (Language::Cpp, _) => return None,
            // Java and C# declare a field's or a local's type, and assignments
            // cannot change it: only declarations are read. `Store a, b = new
            // Store();` declares several.
            (Language::Java, "field_declaration" | "local_variable_declaration")
                if fields == (node.kind() == "field_declaration") =>
            {
                let ty = field("type");
                let mut walk = node.walk();
                for d in node.children_by_field_name("declarator", &mut walk) {
                    if let Some(name) = d.child_by_field_name("name") {
                        push(name, typed(ty, d.child_by_field_name("value")));
                    }
                }
                return Some(());
            }
            (Language::CSharp, "variable_declaration")
                if fields == (parent_kind == "field_declaration") =>
            {
                let ty = field("type");
                let mut walk = node.walk();
                for d in
                    node.named_children(&mut walk).filter(|d| d.kind() == "variable_declarator")
                {
                    let Some(name) = d.child_by_field_name("name") else { continue };
                    // The initializer is the declarator's last child, if not its name.
                    let value = d.named_child(d.named_child_count().saturating_sub(1) as u32);
                    push(name, typed(ty, value.filter(|v| v.id() != name.id())));
                }
                return Some(());
            }
            (Language::CSharp, "property_declaration") if fields => {
                (field("name")?, Bound::Stated(field("type").and_then(|t| self.type_name(t))))
            }
            (Language::Java | Language::CSharp, _) if fields => return None,
            (
                Language::Java,
                "formal_parameter" | "catch_formal_parameter" | "enhanced_for_statement",
            )
            | (Language::CSharp, "parameter" | "foreach_statement") => {
                let name = field("name").or_else(|| field("left"))?;
                (name, typed(field("type"), None))
            }
            // Lambda parameters without types: `(a, b) -> ...`.
            (Language::Java, "identifier") if parent_kind == "inferred_parameters" => {
                (node, Bound::Stated(None))
            }
            (Language::Java | Language::CSharp, _) => return None,
            // Rust's struct fields: `store: Store`, `pub cache: Box<Cache>`.
            (Language::Rust, "field_declaration") if fields => {
                (field("name")?, Bound::Stated(field("type").and_then(|t| self.type_name(t))))
            }
            (Language::Rust, _) if fields => return None,
            // A struct's fields: `store *Store`, `a, b Reader`.
            (Language::Go, "field_declaration") if fields => {
                let ty = field("type");
                let mut walk = node.walk();
                for name in node.children_by_field_name("name", &mut walk) {
                    push(name, typed(ty, None));
                }
                return Some(());
            }
            (Language::Go, _) if fields => return None,
            // Go: `func (l *Linter) m(a, b T)`, `x, err := New()`, `var x T = v`,
            // `for _, f := range fs`. (Struct fields are read from the struct's
            // type, when this file declares it: `l.store.Flush()`.)
            (Language::Go, "parameter_declaration" | "var_spec") => {
                let ty = field("type");
                let values: Vec<Node<'_>> = match field("value") {
                    Some(list) => list.named_children(&mut list.walk()).collect(),
                    None => Vec::new(),
                };
                let mut walk = node.walk();
                for (i, name) in node.children_by_field_name("name", &mut walk).enumerate() {
                    push(name, typed(ty, values.get(i).copied()));
                }
                return Some(());
            }
            // `switch v := x.(type)`, `case v := <-ch:`: of no one type here.
            (Language::Go, "type_switch_statement" | "receive_statement") => {
                let list = field("alias").or_else(|| field("left"))?;
                for name in list.named_children(&mut list.walk()) {
                    push(name, Bound::Stated(None));
                }
                return Some(());
            }
            (Language::Go, "short_var_declaration" | "range_clause") => {
                let list = |f: &str| -> Vec<Node<'_>> {
                    field(f).map_or(Vec::new(), |l| l.named_children(&mut l.walk()).collect())
                };
                let (left, right) = (list("left"), list("right"));
                let range = node.kind() == "range_clause";
                for (i, name) in left.into_iter().enumerate() {
                    // `x, err := New()`: the first result is what `New` returns.
                    let value = right.get(i).copied().filter(|_| !range);
                    push(name, value.map_or(Bound::Stated(None), Bound::Value));
                }
                return Some(());
            }
            (Language::Go, _) => return None,
            // Fields are assigned in methods; everything else is a local.
            (Language::Python, "assignment") => {
                let left = field("left")?;
                let var = match left.kind() {
                    "identifier" if !fields || class_level => left,
                    "attribute" if fields => self.self_field(left)?,
                    _ => return None,
                };
                (var, typed(field("type"), field("right")))
            }
            (_, "public_field_definition" | "field_definition") if fields => {
                (field("name").or_else(|| field("property"))?, typed(field("type"), field("value")))
            }
            (_, "assignment_expression") => {
                let left = field("left")?;
                let var = if fields { self.self_field(left)? } else { ident(Some(left))? };
                (var, typed(None, field("right")))
            }
            _ if fields => return None,
            (Language::Python, "typed_parameter") => {
                (ident(node.named_child(0))?, Bound::Stated(self.type_name(field("type")?)))
            }
            (Language::Python, "typed_default_parameter" | "default_parameter") => {
                (field("name")?, Bound::Stated(field("type").and_then(|t| self.type_name(t))))
            }
            (Language::Python, "identifier")
                if matches!(parent_kind, "parameters" | "lambda_parameters") =>
            {
                (node, Bound::Stated(None))
            }
            (Language::Python, "for_statement") => (ident(field("left"))?, Bound::Stated(None)),
            (_, "required_parameter" | "optional_parameter") => (
                ident(field("pattern"))?,
                Bound::Stated(field("type").and_then(|t| self.type_name(t))),
            ),
            (Language::JavaScript, "identifier") if parent_kind == "formal_parameters" => {
                (node, Bound::Stated(None))
            }
            (_, "variable_declarator") => {
                (ident(field("name"))?, typed(field("type"), field("value")))
            }
            (_, "for_in_statement") => (ident(field("left"))?, Bound::Stated(None)),
            (Language::Rust, "parameter") => (
                ident(field("pattern"))?,
                Bound::Stated(field("type").and_then(|t| self.type_name(t))),
            ),
            (Language::Rust, "identifier") if parent_kind == "closure_parameters" => {
                (node, Bound::Stated(None))
            }
            (Language::Rust, "let_declaration") => {
                let pattern = field("pattern")?;
                let var = match pattern.kind() {
                    "identifier" => pattern,
                    "mut_pattern" => ident(pattern.named_child(0))?,
                    _ => return None,
                };
                (var, typed(field("type"), field("value")))
            }
            (Language::Rust, "for_expression") => (ident(field("pattern"))?, Bound::Stated(None)),
            _ => return None,
        };
        push(var, ty);
        Some(())
    }

    /// `self.x` / `this.x` → `x`.
    fn self_field<'n>(&self, node: Node<'n>) -> Option<Node<'n>> {
        if !matches!(
            node.kind(),
            "attribute"
                | "member_expression"
                | "field_expression"
                | "field_access"
                | "member_access_expression"
        ) {
            return None;
        }
        let object = node.child(0)?;
        if !matches!(self.text(object), "self" | "this") {
            return None;
        }
        node.child(node.child_count().checked_sub(1)?)
    }

    /// The type an expression constructs: `Foo(..)`, `m.Foo(..)`, `new Foo(..)`,
    /// `Foo::new(..)`, `Foo { .. }`; for a call of a free function `make(..)` or
    /// a method `f.reader(..)` (`f: File`), the stand-ins `make()` and
    /// `File.reader()` (see the module documentation). `open` holds the scopes
    /// around `value`.
    fn constructed(&mut self, value: Node<'t>, open: &[Node<'t>]) -> Option<String> {
        self.constructed_or_returned(value, false, open)
    }

    fn constructed_or_returned(
        &mut self,
        value: Node<'t>,
        unwrapped: bool,
        open: &[Node<'t>],
    ) -> Option<String> {
        let q = if unwrapped { "?" } else { "" };
        let callee = match value.kind() {
            "call" | "call_expression" => value.child_by_field_name("function")?,
            // Java's `m()` and `obj.m()`, C#'s likewise: a method, never a
            // constructor (which takes `new`).
            "method_invocation" => {
                let name = value.child_by_field_name("name")?;
                return match value.child_by_field_name("object") {
                    Some(object) => self.method_returned(object, name, q, open),
                    None => self.own_method_returned(self.text(name), q, open),
                };
            }
            "invocation_expression" => {
                let function = value.child_by_field_name("function")?;
                return match member_parts(function) {
                    Some((object, name)) => self.method_returned(object, name, q, open),
                    None => self.own_method_returned(self.text(function), q, open),
                };
            }
            // `new Foo(..)`: JS's `constructor`, C++'s `type`.
            "new_expression" => value
                .child_by_field_name("constructor")
                .or_else(|| value.child_by_field_name("type"))?,
            "struct_expression" => value.child_by_field_name("name")?,
            // `new Foo(..)` (Java, C#), `Foo{..}` (Go).
            "object_creation_expression" | "composite_literal" => {
                let ty = value.child_by_field_name("type")?;
                return self.type_name(ty);
            }
            // Go's `&Foo{..}`.
            "unary_expression" if self.text(value).starts_with('&') => {
                let operand = value.child_by_field_name("operand")?;
                return self.constructed_or_returned(operand, false, open);
            }
            // What `?` or `await` gives of a `Result`, `Option` or `Promise`.
            "await" | "await_expression" | "try_expression" => {
                return self.constructed_or_returned(value.named_child(0)?, true, open);
            }
            _ => return None,
        };
        // Python's `cls(..)`, `type(self)(..)`, `self.__class__(..)`: an
        // instance of the enclosing class (or a subclass, whose methods the
        // class's stand in for), the usual factory in a classmethod.
        if self.lang == Language::Python
            && matches!(self.text(callee), "cls" | "type(self)" | "self.__class__")
        {
            return self.class_name(open);
        }
        // `f.reader()`, `self.reader()`: what that method of the receiver's type
        // returns. (In Python and JS, `m.Foo()` constructs a `Foo`, below; Go, C#
        // and C++ spell methods like types.)
        let constructs = matches!(
            self.lang,
            Language::Python | Language::JavaScript | Language::TypeScript | Language::Tsx
        );
        if let Some((object, name)) = member_parts(callee)
            && value.kind() != "new_expression"
            && !(constructs && is_type_name(self.text(name)))
        {
            return self.method_returned(object, name, q, open);
        }
        // `self.Factory()`, `this.Klass()`: an attribute that may hold anything.
        if callee.child(0).is_some_and(|o| matches!(self.text(o), "self" | "this" | "cls")) {
            return None;
        }
        let text = self.text(callee);
        // C++'s `std::make_unique<Foo>(..)`: a `Foo` behind a smart pointer.
        if self.lang == Language::Cpp
            && let Some(rest) =
                text.split_once("make_unique<").or_else(|| text.split_once("make_shared<"))
        {
            return normalize_type(first_generic_argument(rest.1)).map(str::to_owned);
        }
        let segments: Vec<&str> = text.split(['.', ':']).filter(|s| !s.is_empty()).collect();
        // `Foo::new()`, `Foo::default()`: the type before a lowercase constructor.
        let ty = match (value.kind(), segments.as_slice()) {
            ("call_expression", [.., ty, f])
                if self.lang == Language::Rust && !is_type_name(f) && is_type_name(ty) =>
            {
                ty
            }
            // C++'s `Foo::Create(..)`: a static method (of `Foo` or a base).
            ("call_expression", [.., ty, f])
                if self.lang == Language::Cpp && is_type_name(ty) && is_identifier(f) =>
            {
                return Some(format!("{ty}.{f}(){q}"));
            }
            (_, [.., last]) => last,
            _ => return None,
        };
        let ty = strip_generics(ty);
        // (Go spells exported functions like types; a conversion `T(x)` is rare.)
        if is_type_name(ty) && self.lang != Language::Go {
            return Some(ty.to_owned());
        }
        // `make_linter()`, `config::load()`: whatever that function is declared to
        // return, which only the call graph can look up (`make_linter()` stands for
        // it, `load()?` for what `?` unwraps of it). Not `obj.make()`: a method of
        // who knows what.
        let free_function = match self.lang {
            Language::Rust => matches!(callee.kind(), "identifier" | "scoped_identifier"),
            // `leveldb::NewLRUCache(..)`: a namespace's function.
            Language::Cpp => matches!(callee.kind(), "identifier" | "qualified_identifier"),
            _ => callee.kind() == "identifier",
        };
        (free_function && is_identifier(ty) && value.kind() != "new_expression")
            .then(|| format!("{ty}(){q}"))
    }

    /// `object.method(..)` as a stand-in: the receiver's type, then the method
    /// (`Reader.next()`, `make().next()`, Go's `store.Open()`).
    fn method_returned(
        &mut self,
        object: Node<'t>,
        method: Node<'t>,
        q: &str,
        open: &[Node<'t>],
    ) -> Option<String> {
        let method = strip_generics(self.text(method));
        if !is_identifier(method) {
            return None;
        }
        let owner = self.type_of_deeper(object, open)?;
        (owner.matches("()").count() < MAX_CHAIN).then(|| format!("{owner}.{method}(){q}"))
    }

    /// The type of the object a call or a field is read from (`f` in
    /// `f.reader()`, `l` in `l.store`): one step deeper in a chain, none past
    /// [`MAX_CHAIN`].
    fn type_of_deeper(&mut self, object: Node<'t>, open: &[Node<'t>]) -> Option<String> {
        if self.depth >= MAX_CHAIN {
            return None;
        }
        self.depth += 1;
        let t = self.type_of(object, open);
        self.depth -= 1;
        t
    }

    /// A call without a receiver in Java or C#: a method of the enclosing class (or
    /// of a base), as the stand-in `Linter.make()`.
    fn own_method_returned(&self, method: &str, q: &str, open: &[Node<'t>]) -> Option<String> {
        let method = strip_generics(method);
        let class = self.class_name(open)?;
        is_identifier(method).then(|| format!("{class}.{method}(){q}"))
    }

    /// Whether a Go import of this file binds `name`: its alias, else the last
    /// segment of its path as packages are usually named (`gopkg.in/yaml.v3` →
    /// `yaml`, `example.com/m/v2` → `m`). A package named otherwise than its path
    /// (`github.com/json-iterator/go` is `jsoniter`) is missed: its calls are then
    /// matched by name, as before.
    fn imports_go_package(&mut self, name: &str) -> bool {
        if self.go_packages.is_none() {
            self.go_packages = Some(self.go_imports());
        }
        self.go_packages.as_ref().is_some_and(|packages| packages.contains(name))
    }

    /// See [`Receivers::imports_go_package`].
    fn go_imports(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        let mut walk = self.root.walk();
        let mut stack: Vec<Node<'t>> =
            self.root.children(&mut walk).filter(|n| n.kind() == "import_declaration").collect();
        while let Some(node) = stack.pop() {
            if node.kind() != "import_spec" {
                stack.extend(node.named_children(&mut walk));
                continue;
            }
            let bound = match node.child_by_field_name("name") {
                Some(alias) => Some(self.text(alias)),
                None => {
                    node.child_by_field_name("path").and_then(|p| go_package_name(self.text(p)))
                }
            };
            out.extend(bound.map(str::to_owned));
        }
        out
    }

    /// The type of field `field` of the class named `class`, if this file defines
    /// that class (once: a name defined twice is not looked into) and its body
    /// declares or sets the field with a type.
    fn field_of(&mut self, class: &str, field: &str) -> Option<String> {
        if self.classes.is_none() {
            self.classes = Some(self.classes_by_name());
        }
        let node = *self.classes.as_ref()?.get(class)?;
        self.lookup(node, true, field, &[node]).flatten()
    }

    /// See [`Receivers::field_of`]: the classes and structs defined once.
    fn classes_by_name(&self) -> HashMap<String, Node<'t>> {
        let mut out: HashMap<String, Option<Node<'t>>> = HashMap::new();
        let mut cursor = self.root.walk();
        let mut stack = vec![self.root];
        while let Some(node) = stack.pop() {
            let struct_type = (node.kind() == "type_spec"
                && node.child_by_field_name("type").is_some_and(|t| t.kind() == "struct_type"))
                || node.kind() == "struct_item";
            if (is_class(node.kind()) || struct_type)
                && let Some(name) = node.child_by_field_name("name")
            {
                let name = self.text(name).to_owned();
                out.entry(name).and_modify(|c| *c = None).or_insert(Some(node));
            }
            stack.extend(node.named_children(&mut cursor).filter(|c| !binds_nothing(c.kind())));
        }
        out.into_iter().filter_map(|(name, node)| Some((name, node?))).collect()
    }

    /// The name of the innermost class around (in Rust, the type of the `impl`
    /// block; in C++, also the scope of an out-of-line method: `void
    /// DBImpl::Write()` is in `DBImpl`).
    fn class_name(&self, open: &[Node<'t>]) -> Option<String> {
        let scope = open.iter().rev().find(|n| {
            is_class(n.kind())
                || n.kind() == "impl_item"
                || (self.lang == Language::Cpp && n.kind() == "function_definition")
        })?;
        let name = match scope.kind() {
            // `impl Store`, `impl<T> Trait for Store<T>`.
            "impl_item" => strip_generics(self.text(scope.child_by_field_name("type")?)),
            "function_definition" => {
                let mut d = scope.child_by_field_name("declarator")?;
                while d.kind() != "qualified_identifier" {
                    d = d.child_by_field_name("declarator")?;
                }
                let scope =
                    super::qualified_declarator(d, self.src).child_by_field_name("scope")?;
                strip_generics(self.text(scope))
            }
            _ => self.text(scope.child_by_field_name("name")?),
        };
        is_identifier(name).then(|| name.to_owned())
    }

    /// The class a type annotation names, unwrapping references, optionals and
    /// smart pointers: `&mut Linter`, `Optional["Linter"]`, `Linter | None`,
    /// `Box<dyn Linter>`, `m.Linter` → `Linter`.
    fn type_name(&self, node: Node<'_>) -> Option<String> {
        normalize_type(self.text(node)).map(str::to_owned)
    }
}

/// See [`Receivers::type_name`].
fn normalize_type(text: &str) -> Option<&str> {
    let mut t = text.trim().trim_start_matches(':').trim();
    if t.len() > 200 {
        return None;
    }
    loop {
        let before = t;
        for prefix in ["&", "*", "mut ", "dyn ", "impl "] {
            if let Some(rest) = t.strip_prefix(prefix) {
                t = rest.trim();
            }
        }
        // A lifetime (`&'a T`) before a quoted name (`'Linter'`, Python).
        if let Some(rest) = t.strip_prefix('\'')
            && let Some((lifetime, rest)) = rest.split_once(' ')
            && !lifetime.contains('\'')
        {
            t = rest.trim();
        }
        t = t.trim_matches(|c| c == '\'' || c == '"').trim();
        // `X | None`, `None | X`, `X | undefined`: the one real alternative.
        if t.contains('|') {
            let real: Vec<&str> = t
                .split('|')
                .map(str::trim)
                .filter(|p| !matches!(*p, "None" | "null" | "undefined"))
                .collect();
            match real.as_slice() {
                [one] => t = one,
                _ => return None,
            }
        }
        for wrapper in [
            "Optional[",
            "Box<",
            "Rc<",
            "Arc<",
            "Type[",
            "type[",
            "std::unique_ptr<",
            "std::shared_ptr<",
            "unique_ptr<",
            "shared_ptr<",
        ] {
            if let Some(inner) = t.strip_prefix(wrapper) {
                t = inner.strip_suffix([']', '>']).unwrap_or(inner).trim();
            }
        }

        if t == before {
            break;
        }
    }
    let t = strip_generics(t);
    let t = t.rsplit(['.', ':']).next().unwrap_or(t);
    is_identifier(t).then_some(t)
}

/// `Foo<A, B>, E>` → `Foo<A, B>`: up to the first comma (or the closing `>`) at
/// the top level.
fn first_generic_argument(inner: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' if depth == 0 => return inner[..i].trim(),
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => return inner[..i].trim(),
            _ => {}
        }
    }
    inner.trim()
}

/// What the signature of a function (or method) named `name` says it returns, as a
/// type name: `def f() -> Linter:`, `fn f() -> Linter`, `function f<T>(x: T):
/// Linter`, `(x): Linter =>`, Go's `func New() *Linter` and `func (s *S) New()
/// (*Linter, error)` → `Linter` (the annotation after the parameter list; Go's
/// first result); Java's and C#'s `public <T> Linter<T> f(..)`, before the name.
/// With `unwrapped` (Rust's `?` or an `await` was applied to the call),
/// `Result<Foo, E>`, `Option<Foo>`, `Promise<Foo>` and `Task<Foo>` give `Foo`.
pub fn return_type<'a>(
    signature: &'a str,
    name: &str,
    unwrapped: bool,
    lang: Language,
) -> Option<&'a str> {
    if matches!(lang, Language::Java | Language::CSharp | Language::Cpp) {
        return type_before_name(signature, name, unwrapped);
    }
    // Go's method receiver comes before the name: the parameters after it.
    let signature = match signature.strip_prefix("func (") {
        Some(_) if lang == Language::Go => {
            let (_, close) = parameter_list(signature)?;
            &signature[close? + 1..]
        }
        _ => signature,
    };
    let (_, close) = parameter_list(signature)?;
    let rest = signature[close? + 1..].trim_start();
    if lang == Language::Go {
        let rest = rest.trim_end_matches('{').trim();
        let first = match rest.strip_prefix('(') {
            Some(results) => first_generic_argument(results),
            None => rest,
        };
        // A named result: `(l *Linter, err error)`.
        return normalize_type(first.rsplit(' ').next().unwrap_or(first));
    }
    let rest = rest.strip_prefix("->").or_else(|| rest.strip_prefix(':'))?;
    let mut t = rest.split(" where ").next().unwrap_or(rest);
    t = t.split("=>").next().unwrap_or(t).trim().trim_end_matches(['{', ':']).trim();
    if unwrapped {
        for wrapper in ["Result<", "io::Result<", "anyhow::Result<", "Option<", "Promise<"] {
            if let Some(inner) = t.strip_prefix(wrapper) {
                t = first_generic_argument(inner);
                break;
            }
        }
    }
    normalize_type(t)
}

/// Java's and C#'s return type: the word before the method's name, generics and
/// all (`@Override public <T> TypeAdapter<T> create(` → `TypeAdapter`). Not an
/// array, a modifier (a constructor has no return type) or `void`.
fn type_before_name<'a>(signature: &'a str, name: &str, unwrapped: bool) -> Option<&'a str> {
    // (C++: `Foo *make(`, `Status DBImpl::Write(`.)
    let at = signature.match_indices(name).map(|(i, _)| i).find(|&i| {
        let before = signature[..i].chars().next_back();
        let after = signature[i + name.len()..].trim_start().chars().next();
        before.is_some_and(|c| c.is_whitespace() || matches!(c, '*' | '&' | ':'))
            && matches!(after, Some('(' | '<'))
    })?;
    let mut head = signature[..at].trim_end_matches(['*', '&', ' ']);
    // C++'s out-of-line `Status DBImpl::Write(`: the class before the name.
    if head.ends_with("::") {
        head = head.trim_end_matches(|c: char| c != ' ' && c != '\t' && c != '\n');
    }
    let head = head.trim_end();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in head.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => depth -= 1,
            c if c.is_whitespace() && depth == 0 => {
                start = i + c.len_utf8();
                break;
            }
            _ => {}
        }
    }
    let mut t = head[start..].trim_end_matches(['?', '*', '&']);
    if is_modifier(t) {
        return None;
    }
    if unwrapped {
        for wrapper in ["Task<", "ValueTask<"] {
            if let Some(inner) = t.strip_prefix(wrapper) {
                t = first_generic_argument(inner);
                break;
            }
        }
    }
    normalize_type(t).filter(|t| *t != "void")
}

/// The words before a Java or C# method's name that are not its return type
/// (and an array type, whose methods are not the element's).
fn is_modifier(word: &str) -> bool {
    matches!(
        word,
        "public"
            | "private"
            | "protected"
            | "internal"
            | "static"
            | "final"
            | "abstract"
            | "override"
            | "virtual"
            | "sealed"
            | "async"
            | "synchronized"
            | "native"
            | "new"
            | "extern"
            | "unsafe"
            | "readonly"
            | "partial"
            | "default"
            | "strictfp"
            | "inline"
            | "explicit"
            | "constexpr"
            | "friend"
            | "const"
            | "class"
            | "struct"
            | "typename"
            | ""
    ) || word.starts_with('@')
        || word.ends_with(')')
        || word.ends_with(']')
}

/// Where a signature's parameter list (or a Python class header's bases) is: the
/// first `(` outside generics (`<T extends (a) => b>`), and its `)` unless the
/// signature was cut before it.
pub fn parameter_list(signature: &str) -> Option<(usize, Option<usize>)> {
    let mut depth = 0i32;
    let mut open = None;
    let mut prev = ' ';
    for (i, c) in signature.char_indices() {
        match c {
            '(' if depth == 0 && open.is_none() => {
                open = Some(i);
                depth += 1;
            }
            '(' | '[' | '<' | '{' => depth += 1,
            '>' if prev == '=' || prev == '-' => {} // `=>`, `->`
            ')' | ']' | '>' | '}' => {
                depth -= 1;
                if let Some(open) = open.filter(|_| depth == 0 && c == ')') {
                    return Some((open, Some(i)));
                }
            }
            _ => {}
        }
        prev = c;
    }
    open.map(|open| (open, None))
}

/// A member access's object and member: `f.reader` → `f`, `reader`, in each
/// grammar's spelling.
fn member_parts(node: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    let (object, member) = match node.kind() {
        "attribute" => ("object", "attribute"),
        "member_expression" => ("object", "property"),
        // Rust's `value`, C++'s `argument`.
        "field_expression" if node.child_by_field_name("argument").is_some() => {
            ("argument", "field")
        }
        "field_expression" => ("value", "field"),
        "selector_expression" => ("operand", "field"),
        "member_access_expression" => ("expression", "name"),
        "field_access" => ("object", "field"),
        _ => return None,
    };
    Some((node.child_by_field_name(object)?, node.child_by_field_name(member)?))
}

/// The variable a C++ declarator declares: `x`, `*p`, `&r`, `x = 1`, `f_`; not
/// a function or an array.
fn declared_name(mut d: Node<'_>) -> Option<Node<'_>> {
    loop {
        match d.kind() {
            "identifier" | "field_identifier" => return Some(d),
            "init_declarator" | "pointer_declarator" | "reference_declarator" => {
                d = match d.child_by_field_name("declarator") {
                    Some(inner) => inner,
                    // `&r`: the reference declarator's one named child.
                    None => d.named_child(d.named_child_count().checked_sub(1)? as u32)?,
                };
            }
            _ => return None,
        }
    }
}

/// The name a Go package usually has, from its import path: the last segment,
/// less a major-version suffix (`yaml.v3`, `.../v2`) and a `go-` prefix or `-go`
/// suffix.
fn go_package_name(path: &str) -> Option<&str> {
    let path = path.trim_matches(['"', '`']);
    let mut segments = path.rsplit('/');
    let mut last = segments.next()?;
    let is_major = |s: &str| {
        s.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if is_major(last) {
        last = segments.next()?;
    }
    if let Some((head, tail)) = last.rsplit_once('.')
        && is_major(tail)
    {
        last = head;
    }
    let last = last.strip_prefix("go-").unwrap_or(last);
    let last = last.strip_suffix("-go").unwrap_or(last);
    // `github.com/json-iterator/go` is `jsoniter`: no name the path tells.
    (is_identifier(last) && last != "go").then_some(last)
}

/// Python's names for the instance and the class in a method.
fn is_self(name: &str) -> bool {
    matches!(name, "self" | "cls")
}

fn ident(n: Option<Node<'_>>) -> Option<Node<'_>> {
    n.filter(|n| n.kind() == "identifier")
}

/// A name as the languages here spell one: letters, digits and `_`, not first a
/// digit.
fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The outermost `qualified_identifier` a C++ scope `receiver` (`b` in
/// `a::b::f`) belongs to: `a::b::f`.
fn receiver_scope(receiver: Node<'_>) -> Node<'_> {
    let mut top = receiver;
    while let Some(p) = top.parent().filter(|p| p.kind() == "qualified_identifier") {
        top = p;
    }
    top
}

/// `a::b` of `a::b::f` (template arguments dropped, `::f` global prefix too).
fn cpp_scope(qualified: &str) -> &str {
    let flat = strip_generics(qualified);
    flat.rsplit_once("::").map_or(flat, |(scope, _)| scope).trim_start_matches("::")
}

fn strip_generics(t: &str) -> &str {
    t.split(['<', '[']).next().unwrap_or(t).trim()
}

/// The objects a JS runtime provides under these names, unless the file binds them.
pub fn is_js_global(lang: Language, name: &str) -> bool {
    matches!(lang, Language::JavaScript | Language::TypeScript | Language::Tsx)
        && matches!(
            name,
            "console" | "window" | "document" | "process" | "globalThis" | "JSON" | "navigator"
        )
}

/// `Foo`, `HTTPServer`, but not `x`, `MAX_SIZE` or `DB` (a constant, by convention).
fn is_type_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase())
        && is_identifier(s)
        && s.chars().any(|c| c.is_lowercase())
}

/// Expressions and other nodes no binding [`Receivers::binding`] reads can sit in
/// (or only inside a function, which has its own scope): not walked, which halves
/// the cost of a scope.
fn binds_nothing(kind: &str) -> bool {
    matches!(
        kind,
        "string"
            | "string_literal"
            | "raw_string_literal"
            | "template_string"
            | "comment"
            | "line_comment"
            | "block_comment"
            | "argument_list"
            | "arguments"
            | "attribute"
            | "member_expression"
            | "field_expression"
            | "scoped_identifier"
            | "binary_operator"
            | "binary_expression"
            | "comparison_operator"
            | "boolean_operator"
            | "subscript"
            | "subscript_expression"
            | "index_expression"
            | "dictionary"
            | "list"
            | "tuple"
            | "object"
            | "array"
            | "type"
            | "type_annotation"
            | "decorator"
            | "attribute_item"
            | "use_declaration"
            | "macro_invocation"
            // Calls: a binding inside one is in a function of its own (a lambda).
            | "call"
            | "call_expression"
            | "method_invocation"
            | "invocation_expression"
            | "object_creation_expression"
            | "field_access"
            | "member_access_expression"
            | "selector_expression"
            | "array_access"
            | "element_access_expression"
            | "cast_expression"
            | "interpreted_string_literal"
            | "annotation"
            | "marker_annotation"
            | "attribute_list"
            | "import_declaration"
            | "package_declaration"
            | "using_directive"
    )
}

fn is_parameter_list(kind: &str) -> bool {
    matches!(
        kind,
        "parameters"
            | "lambda_parameters"
            | "formal_parameters"
            | "closure_parameters"
            | "inferred_parameters"
    )
}

/// Languages whose methods name their class's fields without `this.`, and whose
/// fields are declared in the class body.
fn declares_fields(lang: Language) -> bool {
    matches!(lang, Language::Java | Language::CSharp | Language::Cpp)
}

fn is_function(kind: &str) -> bool {
    matches!(
        kind,
        "function_definition"
            | "lambda"
            | "function_declaration"
            | "function_expression"
            | "function"
            | "generator_function_declaration"
            | "arrow_function"
            | "method_definition"
            | "function_item"
            | "closure_expression"
            // Go, Java, C#.
            | "method_declaration"
            | "constructor_declaration"
            | "func_literal"
            | "lambda_expression"
            | "local_function_statement"
    )
}

fn is_class(kind: &str) -> bool {
    matches!(
        kind,
        "class_definition"
            | "class_declaration"
            | "class"
            | "abstract_class_declaration"
            | "record_declaration"
            | "struct_declaration"
            | "enum_declaration"
            | "class_specifier"
            | "struct_specifier"
    )
}

/// The nodes [`Receivers::type_of`] wants to know it is inside of.
pub(super) fn is_scope(kind: &str) -> bool {
    is_function(kind) || is_class(kind) || kind == "impl_item"
}

#[cfg(test)]
mod tests {
    use super::{go_package_name, normalize_type, return_type};
    use crate::lang::Language;

    #[test]
    fn annotations_name_their_class() {
        for (text, want) in [
            ("Linter", Some("Linter")),
            (": Linter", Some("Linter")),
            ("&mut Linter", Some("Linter")),
            ("&'static Linter", Some("Linter")),
            ("Optional['Linter']", Some("Linter")),
            ("Optional[\"m.Linter\"]", Some("Linter")),
            ("Linter | None", Some("Linter")),
            ("None | Linter", Some("Linter")),
            ("Box<dyn Linter>", Some("Linter")),
            ("Arc<Mutex<Linter>>", Some("Mutex")),
            ("Vec<Linter>", Some("Vec")),
            ("list[str]", Some("list")),
            ("crate::lint::Linter<'a>", Some("Linter")),
            ("int | str", None),
            ("Callable[[int], str]", Some("Callable")),
            ("(a, b)", None),
        ] {
            assert_eq!(normalize_type(text), want, "{text}");
        }
    }

    #[test]
    fn go_packages_are_named_by_their_import_paths() {
        for (path, want) in [
            ("\"net/http\"", Some("http")),
            ("\"fmt\"", Some("fmt")),
            ("\"gopkg.in/yaml.v3\"", Some("yaml")),
            ("\"github.com/go-chi/chi/v5\"", Some("chi")),
            ("\"github.com/mattn/go-isatty\"", Some("isatty")),
            ("\"github.com/bytedance/sonic-go\"", Some("sonic")),
            ("\"github.com/json-iterator/go\"", None),
        ] {
            assert_eq!(go_package_name(path), want, "{path}");
        }
    }

    #[test]
    fn return_types_from_signatures() {
        for (signature, unwrapped, want) in [
            ("def make(a: int, b: Callable[[int], str] = f) -> Linter:", false, Some("Linter")),
            ("async def make(self) -> \"Optional[m.Linter]\":", false, Some("Linter")),
            ("def make(a):", false, None),
            ("pub fn open(path: &Path) -> Result<Store, Error>", true, Some("Store")),
            ("pub fn open(path: &Path) -> Result<Store, Error>", false, Some("Result")),
            ("fn find() -> io::Result<Option<Vec<u8>>>", true, Some("Option")),
            ("fn build<T>(x: T) -> Graph<T> where T: Clone", false, Some("Graph")),
            ("fn run(&self)", false, None),
            ("function createRoot(options: Partial<Root> = {}): RootNode", false, Some("RootNode")),
            (
                "function debounce<T extends (...args: any[]) => any>(fn: T): Timer",
                false,
                Some("Timer"),
            ),
            ("export async function load(p: string): Promise<Config>", true, Some("Config")),
            ("export async function load(p: string): Promise<Config>", false, Some("Promise")),
            ("const make = (a: A): Linter =>", false, Some("Linter")),
            ("function f(a) {", false, None),
        ] {
            assert_eq!(return_type(signature, "", unwrapped, Language::Rust), want, "{signature}");
        }
        for (signature, want) in [
            ("func NewLinter(s *store.Store) *Linter", Some("Linter")),
            ("func Open(path string) (*store.DB, error)", Some("DB")),
            ("func parse(b []byte) (cfg Config, err error)", Some("Config")),
            ("func run(args []string) error", Some("error")),
            ("func run()", None),
            ("func all() []Linter", None),
            ("func index() map[string]int", Some("map")),
            ("func (l *Linter) Open(p string) (*store.DB, error)", Some("DB")),
            ("func (Linter) Store() Store", Some("Store")),
        ] {
            assert_eq!(return_type(signature, "", false, Language::Go), want, "{signature}");
        }
        // Java and C#: the type before the method's name.
        for (signature, name, unwrapped, want) in [
            (
                "@Override public <T> TypeAdapter<T> create(Gson gson)",
                "create",
                false,
                Some("TypeAdapter"),
            ),
            ("public Map<String, JsonElement> asMap()", "asMap", false, Some("Map")),
            (
                "@SuppressWarnings(\"unchecked\") JsonReader newReader(Reader r)",
                "newReader",
                false,
                Some("JsonReader"),
            ),
            ("public <T> T fromJson(String json)", "fromJson", false, Some("T")),
            ("public void write(JsonWriter out)", "write", false, None),
            ("public Gson(GsonBuilder builder)", "Gson", false, None),
            ("Gson(GsonBuilder builder)", "Gson", false, None),
            ("String[] names()", "names", false, None),
            ("public static JsonReader? Create<T>(string s)", "Create", false, Some("JsonReader")),
            ("public async Task<JsonReader> OpenAsync()", "OpenAsync", true, Some("JsonReader")),
            ("public async Task<JsonReader> OpenAsync()", "OpenAsync", false, Some("Task")),
            (
                "internal Schema ReadSchema(Schema parent, bool readSchema)",
                "ReadSchema",
                false,
                Some("Schema"),
            ),
        ] {
            assert_eq!(
                return_type(signature, name, unwrapped, Language::Java),
                want,
                "{signature}"
            );
        }
    }
}
