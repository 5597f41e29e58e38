/// A growable stack of plain values in one allocation: no copy-on-write checks on the per-event path.
struct PlainStack<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity = 16
    private(set) var count = 0

    init() { base = .allocate(capacity: capacity) }
    deinit { base.deallocate() }

    subscript(index: Int) -> Element { base[index] }
    var last: Element { base[count - 1] }

    mutating func push(_ element: Element) {
        if count == capacity { base = doubled(base, count: count, capacity: &capacity) }
        base[count] = element
        count += 1
    }

    mutating func removeLast() -> Element {
        count -= 1
        return base[count]
    }

    mutating func removeLast(_ n: Int) { count -= n }
}

/// Moves the `count` values at `base` into an allocation twice as large and frees the old one.
func doubled<T>(_ base: UnsafeMutablePointer<T>, count: Int, capacity: inout Int) -> UnsafeMutablePointer<T> {
    let grown = UnsafeMutablePointer<T>.allocate(capacity: capacity * 2)
    grown.moveInitialize(from: base, count: count)
    base.deallocate()
    capacity *= 2
    return grown
}

extension PlainStack where Element: Equatable {
    /// Removes one occurrence of `element` (order is not kept).
    mutating func remove(_ element: Element) {
        for index in 0..<count where base[index] == element {
            base[index] = base[count - 1]
            count -= 1
            return
        }
    }
}
