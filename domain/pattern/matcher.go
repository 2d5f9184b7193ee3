package pattern

import (
	"sort"
	"sync"
)

// Matcher holds many patterns under ids and answers, in one pass over an event, which of them match.
// It is safe for concurrent use.
type Matcher struct {
	mu       sync.RWMutex
	patterns map[string]*Pattern
	ids      []string // sorted, so results are deterministic
}

// NewMatcher returns an empty matcher.
func NewMatcher() *Matcher {
	return &Matcher{patterns: map[string]*Pattern{}}
}

// Add adds or replaces the pattern under id.
func (m *Matcher) Add(id string, p *Pattern) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.patterns[id]; !ok {
		m.ids = append(m.ids, id)
		sort.Strings(m.ids)
	}
	m.patterns[id] = p
	return nil
}

// Delete removes the pattern under id, if any.
func (m *Matcher) Delete(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.patterns[id]; !ok {
		return
	}
	delete(m.patterns, id)
	for i, v := range m.ids {
		if v == id {
			m.ids = append(m.ids[:i], m.ids[i+1:]...)
			break
		}
	}
}

// Match decodes the event once and returns the ids of every matching pattern, sorted. The error is for an event
// that is not a JSON object.
func (m *Matcher) Match(event []byte) ([]string, error) {
	obj, err := decodeEvent(event)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for _, id := range m.ids {
		if m.patterns[id].root.match(obj) {
			out = append(out, id)
		}
	}
	return out, nil
}
