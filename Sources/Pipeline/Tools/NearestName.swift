/// The name a mistyped one was meant to be: for "did you mean" in messages about commands, options,
/// columns and attributes.
public enum NearestName {
    /// The name nearest to `word` by edit distance, when it is near enough to be a typing slip
    /// (at most a third of its letters, and at most 3); letter case differences count as nothing
    /// when that is all there is (`invoice no` → `Invoice No`).
    public static func nearest(to word: String, among names: [String]) -> String? {
        if let same = names.first(where: { $0.lowercased() == word.lowercased() }) { return same }
        let scored = names.map { ($0, distance(word, $0)) }.filter { $0.1 <= min(3, max(1, word.count / 3)) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// The Damerau–Levenshtein distance (a swap of neighbours counts once: `imrpot` is near `import`).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
