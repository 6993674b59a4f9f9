// Package lint uses most of what Go extraction looks at.
package lint

import (
	"fmt"
	"os"

	"example.com/proj/store"
)

const Limit = 10

// Linter checks files.
type Linter struct {
	store *store.Store
	cache map[string]int
}

// Checker is anything that checks.
type Checker interface {
	Check(files []string) int
}

// NewLinter builds a linter.
func NewLinter(s *store.Store) *Linter {
	return &Linter{store: s, cache: map[string]int{}}
}

func (l *Linter) count(f string) int {
	return l.cache[f]
}

// Check counts.
func (l *Linter) Check(files []string) int {
	n := 0
	for _, f := range files {
		n += l.count(f)
	}
	l.store.Flush()
	return n
}

func run(other Linter) error {
	l := NewLinter(store.Open("db"))
	var c Checker = l
	c.Check([]string{"a.go"})
	other.count("x")
	fmt.Println(os.Args)
	go func() { l.Check(nil) }()
	db := store.Open("db")
	db.Reader().Next()
	return nil
}
