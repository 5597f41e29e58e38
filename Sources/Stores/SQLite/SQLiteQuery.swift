import Drivers
import Foundation

/// One SELECT ready to run: SQL with numbered parameters and their values. `isExact` is false when
/// part of the predicate or sort could not be expressed in SQL with the exact in-memory semantics;
/// the query then returns a superset, unsorted and unpaged, and the store applies the request to it
/// in memory.
struct SQLiteQuery {
    var sql: String
    var arguments: [SQLiteValue]
    var isExact: Bool
    /// Every table the query reads (their deferred indexes are built before it runs).
    var tables: Set<String>
}
