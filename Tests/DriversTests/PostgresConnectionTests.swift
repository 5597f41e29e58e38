import Drivers
import Foundation
import TestSupport
import Testing

/// The libpq wrapper against a real server (issue 35's driver): parameters never spliced into SQL,
/// values back as the server writes them, errors carrying SQLSTATE, message, detail and hint.
@Suite struct PostgresConnectionTests {
    @Test func statementsTakeParametersAndErrorsSayWhatTheServerSaid() throws {
        let connection = try PostgresConnection(conninfo: PostgresTestServer.conninfo)
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try connection.execute(
            "CREATE SCHEMA \(schema); CREATE TABLE \(schema).person (id bigint PRIMARY KEY, name text, born date)")
        defer { try? connection.execute("DROP SCHEMA \(schema) CASCADE") }
        let name = "O'Brien; DROP TABLE x; -- \u{1F600}"
        _ = try connection.query(
            "INSERT INTO \(schema).person VALUES ($1, $2, $3), ($4, NULL, NULL)", ["1", name, "1948-04-28", "2"])
        #expect(
            try connection.query("SELECT id, name, born FROM \(schema).person ORDER BY id") == [
                ["1", name, "1948-04-28"], ["2", nil, nil],
            ])
        #expect {
            _ = try connection.query("INSERT INTO \(schema).person VALUES ($1, 'again')", ["1"])
        } throws: { error in
            guard let error = error as? PostgresError else { return false }
            return error.sqlState == "23505" && error.detail?.contains("(id)=(1)") == true
        }
        #expect {
            try connection.execute("SELEC 1")
        } throws: { error in (error as? PostgresError)?.sqlState == "42601" }
    }

    @Test func aServerThatIsNotThereIsSaid() {
        let folder = "/tmp/sluice-no-server-" + UUID().uuidString
        #expect {
            _ = try PostgresConnection(conninfo: "host=\(folder) user=sluice dbname=postgres connect_timeout=2")
        } throws: { error in
            guard let error = error as? PostgresError else { return false }
            return error.sqlState.isEmpty && error.message.contains(folder)
        }
    }
}
