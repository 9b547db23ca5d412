/// A value held by reference, so a generated message can contain its own type
/// (`FieldInfo.mapKey`). Immutable: a new value replaces the box.
final class IndirectValue<Value: Hashable & Sendable>: Hashable, Sendable {
    let value: Value

    init(_ value: Value) { self.value = value }

    static func == (lhs: IndirectValue, rhs: IndirectValue) -> Bool { lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
