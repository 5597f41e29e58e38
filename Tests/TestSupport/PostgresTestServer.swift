import Drivers
import Foundation

/// The PostgreSQL server the tests use: the libpq conninfo in `SLUICE_TEST_POSTGRES` when set, else
/// a throwaway cluster this test process starts on first use (`scripts/pg-test-cluster.sh`: its own
/// folder under /tmp, a socket there and no TCP port) and stops when it exits. Never skipped: a
/// machine without the server fails the tests that need it (`.ci/run` installs it).
public enum PostgresTestServer {
    public static let conninfo: String = {
        if let given = ProcessInfo.processInfo.environment["SLUICE_TEST_POSTGRES"], !given.isEmpty { return given }
        var template = Array("/tmp/sluice-pg.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("cannot make a folder for the test cluster") }
        let folder = String(cString: made)
        let output = runScript("start", folder)
        clusterFolder = folder
        atexit { if let folder = clusterFolder { _ = runScript("stop", folder) } }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    nonisolated(unsafe) private static var clusterFolder: String?

    /// The server as a `postgresql://` URL (the conninfo's keywords as query parameters).
    public static let url: String = {
        if conninfo.hasPrefix("postgres") { return conninfo }
        var items: [String] = []
        var database = "postgres"
        for pair in conninfo.split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if parts[0] == "dbname" { database = parts[1] } else { items.append("\(parts[0])=\(parts[1])") }
        }
        return "postgresql:///\(database)?" + items.joined(separator: "&")
    }()

    /// A URL of the test server naming a schema no other test uses (`t_<uuid>`; the store makes it).
    public static func freshSchemaURL() -> URL {
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return URL(string: url + (url.contains("?") ? "&" : "?") + "schema=" + schema)!
    }

    /// Drops the schema a URL of `freshSchemaURL()` names, with everything in it.
    public static func dropSchema(of url: URL) {
        guard
            let schema = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
                .first(where: { $0.name == "schema" })?.value,
            let connection = try? PostgresConnection(conninfo: conninfo)
        else { return }
        try? connection.execute("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE")
    }

    /// Runs the cluster script; its standard output.
    private static func runScript(_ command: String, _ folder: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "bash", repositoryRoot.appendingPathComponent("scripts/pg-test-cluster.sh").path, command, folder,
        ]
        let out = Pipe()
        process.standardOutput = out
        do { try process.run() } catch { fatalError("cannot run scripts/pg-test-cluster.sh: \(error)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if command == "start", process.terminationStatus != 0 {
            let status = process.terminationStatus
            fatalError("the test PostgreSQL cluster did not start (scripts/pg-test-cluster.sh exit \(status))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A schema of its own on the tests' server (`t_<uuid>`, made by the store that first opens it),
/// dropped with everything in it when the value goes away.
public final class PostgresTestSchema: @unchecked Sendable {
    public let url: URL
    public let name: String

    public init() {
        url = PostgresTestServer.freshSchemaURL()
        name =
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
            .first { $0.name == "schema" }?.value ?? ""
    }

    deinit { PostgresTestServer.dropSchema(of: url) }

    /// The URL with a password in it (the tests' server trusts its local users, so any password
    /// connects): what a test that must never see the password again gives the command.
    public func url(password: String) -> String {
        url.absoluteString.replacingOccurrences(of: "postgresql://", with: "postgresql://sluice:\(password)@")
    }

    /// Runs SQL with a connection of its own, as `psql` would (this schema first on the search
    /// path, UTC); values as text, `nil` for NULL.
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let connection = try PostgresConnection(conninfo: PostgresTestServer.conninfo)
        try connection.execute("SET search_path = \"\(name)\"; SET TIME ZONE 'UTC'")
        return try connection.query(sql, parameters)
    }

    /// Whether the schema exists (a run that failed before committing leaves none).
    public var exists: Bool {
        (try? query("SELECT count(*) FROM pg_namespace WHERE nspname = $1", [name]))?.first?.first == "1"
    }
}
