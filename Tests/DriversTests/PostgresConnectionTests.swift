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

    /// A streamed COPY stays open across calls (the server inserts while the caller goes on), ends
    /// at the next other call — which throws the server's error for its rows — and after such an
    /// error nothing but a ROLLBACK goes through: a COMMIT would otherwise end the aborted
    /// transaction quietly. Rows a batch's writer threw on are dropped, the COPY goes on.
    @Test func aStreamedCopyEndsAtTheNextCallAndItsFailureHoldsUntilRollback() throws {
        let connection = try PostgresConnection(conninfo: PostgresTestServer.conninfo)
        let observer = try PostgresConnection(conninfo: PostgresTestServer.conninfo)
        let table = "pg_temp.streamed"
        try connection.execute("BEGIN; CREATE TABLE \(table) (id bigint PRIMARY KEY)")
        let copy = "COPY \(table) (id) FROM STDIN (FORMAT binary)"
        func rows(_ ids: [Int64]) -> (PostgresCopy) throws -> Void {
            { copy in
                for id in ids {
                    try copy.startRow(fields: 1)
                    copy.add(bigint: id)
                }
            }
        }
        try connection.streamCopy(copy, rows([1, 2]))
        try connection.streamCopy(copy, rows([3]))
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try connection.streamCopy(copy) { copy in
                try rows([4])(copy)
                throw Refused()
            }
        }
        // Still open: the server shows the COPY running while the caller does something else.
        let running = try observer.query(
            "SELECT query FROM pg_stat_activity WHERE pid = $1", [String(connection.backendPID)])
        #expect(running.first?.first??.hasPrefix("COPY") == true)
        #expect(try connection.query("SELECT id FROM \(table) ORDER BY id") == [["1"], ["2"], ["3"]])

        try connection.streamCopy(copy, rows([5, 1]))
        #expect {
            _ = try connection.query("SELECT 1")
        } throws: { error in (error as? PostgresError)?.sqlState == "23505" }
        #expect(throws: PostgresError.self) { try connection.execute("COMMIT") }
        #expect(throws: PostgresError.self) { try connection.streamCopy(copy, rows([6])) }
        try connection.execute("ROLLBACK")
        #expect(try connection.query("SELECT 1") == [["1"]])
    }

    /// Binary numerics written from a mantissa and an exponent (parameters and COPY fields) read
    /// back by the server as the plain text of the same number, with its scale.
    @Test func numericsFromMantissasAreTheNumbersTheyMean() throws {
        let connection = try PostgresConnection(conninfo: PostgresTestServer.conninfo)
        var cases: [(UInt128, Int, Bool)] = [
            (0, 0, false), (0, 0, true), (1, 0, false), (1, 0, true), (5, -1, false), (125, -1, true), (1, -4, false),
            (1, -5, false), (12345, -9, true), (1, 4, false), (12, 3, false), (7, 9, true), (123_456_789, 0, false),
            (UInt128(UInt64.max), -3, false), (UInt128(UInt64.max) * 10 + 1, -20, true), (1, -128, false),
            (3, 100, false), (UInt128(10).power(37) + 1, 0, false), (UInt128(10).power(37) + 7, -38, true),
            (UInt128.max, -1, false), (UInt128.max, 3, true), (UInt128.max, -39, false),
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let digits = Int.random(in: 1...38, using: &generator)
            var mantissa = UInt128(Int.random(in: 1...9, using: &generator))
            for _ in 1..<digits { mantissa = mantissa * 10 + UInt128(Int.random(in: 0...9, using: &generator)) }
            if mantissa % 10 == 0 { mantissa += 1 }
            cases.append((mantissa, Int.random(in: -40...40, using: &generator), Bool.random(using: &generator)))
        }
        let table = "pg_temp.numbers_" + UUID().uuidString.prefix(8).lowercased()
        try connection.execute("CREATE TABLE \(table) (n numeric)")
        _ = try connection.copyIn("COPY \(table) (n) FROM STDIN (FORMAT binary)") { copy in
            for (mantissa, exponent, negative) in cases {
                try copy.startRow(fields: 1)
                copy.add(numericMantissa: mantissa, exponent: exponent, isNegative: negative)
            }
        }
        let copied = try connection.query("SELECT n::text FROM \(table)").map { $0[0] }
        for (index, (mantissa, exponent, negative)) in cases.enumerated() {
            let expected = Self.plainText(mantissa, exponent, negative)
            let bytes = PostgresBinary.numeric(mantissa: mantissa, exponent: exponent, isNegative: negative)
            let sent = try connection.run("SELECT ($1::numeric)::text", [PostgresValue(type: .numeric, bytes: bytes)])
            #expect(String(decoding: sent.bytes(0, 0), as: UTF8.self) == expected, "\(mantissa)e\(exponent)")
            #expect(copied[index] == expected, "\(mantissa)e\(exponent) by COPY")
        }
    }

    /// `mantissa` × 10^`exponent` in plain decimal text, as PostgreSQL prints a numeric of that scale.
    private static func plainText(_ mantissa: UInt128, _ exponent: Int, _ negative: Bool) -> String {
        let digits = String(mantissa)
        var text: String
        if exponent >= 0 {
            text = mantissa == 0 ? "0" : digits + String(repeating: "0", count: exponent)
        } else {
            let padded = String(repeating: "0", count: max(0, -exponent + 1 - digits.count)) + digits
            text = padded.dropLast(-exponent) + "." + padded.suffix(-exponent)
        }
        return (negative && mantissa != 0 ? "-" : "") + text
    }
}

private extension UInt128 {
    func power(_ exponent: Int) -> UInt128 { (0..<exponent).reduce(1) { product, _ in product * self } }
}
