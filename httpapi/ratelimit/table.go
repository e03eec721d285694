package ratelimit

// table is a map bounded to max entries: putting a new key into a full
// table first evicts the least recently used entry. Keys are fixed-size
// hashes (see hashKey), so the memory of a full table does not depend on
// what clients send. It is not safe for concurrent use; its owner locks.
type table[V any] struct {
	max        int
	m          map[key]*node[V]
	head, tail *node[V] // head: least recently used
}

type node[V any] struct {
	k          key
	v          V
	prev, next *node[V]
}

func newTable[V any](max int) *table[V] {
	if max < 1 {
		max = 1
	}
	return &table[V]{max: max, m: make(map[key]*node[V])}
}

// get returns the entry of k and marks it used.
func (t *table[V]) get(k key) (*V, bool) {
	n, ok := t.m[k]
	if !ok {
		return nil, false
	}
	t.unlink(n)
	t.pushBack(n)
	return &n.v, true
}

// put stores v under k, marks it used and returns a pointer to the stored
// value. When k is new and the table is full, the least recently used
// entry is evicted first.
func (t *table[V]) put(k key, v V) *V {
	if n, ok := t.m[k]; ok {
		n.v = v
		t.unlink(n)
		t.pushBack(n)
		return &n.v
	}
	if len(t.m) >= t.max {
		old := t.head
		t.unlink(old)
		delete(t.m, old.k)
	}
	n := &node[V]{k: k, v: v}
	t.m[k] = n
	t.pushBack(n)
	return &n.v
}

func (t *table[V]) delete(k key) {
	if n, ok := t.m[k]; ok {
		t.unlink(n)
		delete(t.m, k)
	}
}

func (t *table[V]) len() int { return len(t.m) }

func (t *table[V]) unlink(n *node[V]) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		t.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		t.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

func (t *table[V]) pushBack(n *node[V]) {
	n.prev = t.tail
	if t.tail != nil {
		t.tail.next = n
	} else {
		t.head = n
	}
	t.tail = n
}
