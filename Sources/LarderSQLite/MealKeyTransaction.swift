/// The writer's changes to a `MealKeyIndex` in its open transaction, each with the
/// staged change it replaced, so that a savepoint or the whole transaction can be
/// undone, and published together once the transaction committed.
struct MealKeyTransaction {
    private let index: MealKeyIndex
    private var undo: [(key: MealKey, replaced: MealKeyIndex.Staged?)] = []
    private var savepointMark: Int?

    init(index: MealKeyIndex) {
        self.index = index
    }

    /// Stages `change` for `key`.
    mutating func stage(_ key: MealKey, _ change: MealKeyIndex.Staged) {
        undo.append((key, index.stage(key, change)))
    }

    mutating func savepoint() { savepointMark = undo.count }

    mutating func releaseSavepoint() { savepointMark = nil }

    /// Undoes the changes since `savepoint()`.
    mutating func rollbackToSavepoint() {
        unstage(downTo: savepointMark ?? undo.count)
        savepointMark = nil
    }

    /// Undoes every change of the transaction.
    mutating func rollback() {
        unstage(downTo: 0)
        savepointMark = nil
    }

    /// Publishes every change; call after the transaction committed.
    mutating func committed() {
        index.publish(undo.lazy.map(\.key))
        undo.removeAll(keepingCapacity: true)
        savepointMark = nil
    }

    private mutating func unstage(downTo mark: Int) {
        while undo.count > mark, let last = undo.popLast() {
            index.stage(last.key, last.replaced)
        }
    }
}
