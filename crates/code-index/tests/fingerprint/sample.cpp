// A file that uses most of what C++ extraction looks at.
#include <string>
#include <vector>
#include "store.hpp"

namespace lint {

constexpr int kLimit = 10;

class Base {
public:
    virtual ~Base() = default;
    void save() { flush(); }
    virtual void flush() {}
};

/// Checks files.
class Linter : public Base {
public:
    explicit Linter(Store* store) : store_(store) {}
    int check(const std::vector<std::string>& files);
    template <typename T> T get(const T& fallback) const { return fallback; }

private:
    int count(const std::string& f) const;
    Store* store_;
};

class Report : public Base {
public:
    LINT_DEPRECATED("use Linter::check()")
    explicit Report(Store* store)
        :
#ifdef LINT_DEBUG
          debug_(true),
#endif
          store_(store) {}
    LINT_MEMBERS(Report, Base)
};

int Linter::check(const std::vector<std::string>& files) {
    int total = 0;
    for (const auto& f : files) {
        total += count(f);
        this->save();
    }
    store_->flush();
    return total;
}

int Linter::count(const std::string& f) const { return store_->lookup(f); }

Linter make(Store* s) {
    Linter l(s);
    l.check({"a"});
    auto other = std::make_unique<Linter>(s);
    other->check({});
    std::swap(l, *other);
    lint::detail::reset(l);
    lint::detail::convert<Linter>(l);
    return l;
}

}  // namespace lint

LINT_INLINE std::shared_ptr<Linter> shared_linter() { return nullptr; }
