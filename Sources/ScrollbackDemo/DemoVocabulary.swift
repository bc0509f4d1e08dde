/// The words and pieces demo conversations are made of: several scripts, emoji, combining
/// marks and code, so that every screen has real-looking, awkward text to draw.
enum DemoVocabulary {
    static let subjects = [
        "the Swift parser", "a PostgreSQL migration", "my sourdough starter", "the quarterly report",
        "a bash script", "CSS grid layout", "the garden irrigation", "a cover letter", "Kubernetes probes",
        "a birthday speech", "the SQLite schema", "regex for dates", "the travel budget", "a React hook",
        "unit tests for the cache", "the ncurses screen", "a résumé", "the café menu", "Rust lifetimes",
        "a chess opening", "the Dockerfile", "a haiku about rain", "memory leaks in C", "the bike route",
        "naïve Bayes", "the piñata party", "a Go HTTP server", "Python packaging", "the wedding toast",
        "tax deductions", "a D&D campaign", "the API rate limiter", "vim macros", "a lullaby",
    ]
    static let verbs = [
        "Refactoring", "Debugging", "Planning", "Explaining", "Reviewing", "Optimizing", "Writing",
        "Understanding", "Fixing", "Designing", "Translating", "Summarizing", "Testing", "Choosing",
    ]
    static let otherTitles = [
        "東京旅行の計画", "数据库索引优化", "한국어 문법 질문", "Ideas for dinner 🍝", "Workout plan 💪",
        "🇯🇵 Japan trip checklist", "Pair programming 👩‍💻 notes", "Café crème vs. latte",
        "Cafe\u{301} au lait origins", "Ä, Ö, Ü and ß in URLs", "مرحبا — Arabic greetings", "שלום and RTL text",
        "Emoji 😀😃😄 in commit messages", "中文分词和搜索", "日本語の敬語について", "Zalgo t\u{336}e\u{334}x\u{335}t",
        "Untitled", "New chat", "Quick question", "Help with homework", "Résumé review ✍️",
    ]
    static let longTitleParts = [
        "A very long conversation title that goes on and on about",
        "Detailed comparison of every option we considered for",
        "Notes, questions, follow-ups and open issues regarding",
    ]
    static let questions = [
        "How do I %@ without breaking everything?", "Can you explain %@ like I'm five?",
        "What's the best way to approach %@?", "Why does %@ keep failing on Mondays?",
        "Could you review %@ and suggest improvements?", "Write me a short plan for %@.",
        "Is there a simpler way to handle %@?", "%@ — what am I missing?",
        "東京で%@について教えてください。", "请帮我解释一下%@。", "%@ 에 대해 알려주세요.",
    ]
    static let sentences = [
        "Start by writing down what you expect to happen and what actually happens.",
        "The short answer is yes, but there are a few trade-offs worth knowing.",
        "Here is a step-by-step approach that has worked well for others.",
        "Keep the first version small; you can always add more later.",
        "This is a common source of confusion, so you are in good company.",
        "Measure before you optimize: the slow part is rarely where you think.",
        "Consider the edge cases: empty input, very large input, and concurrent access.",
        "A naïve solution works for small inputs, but it will not scale.",
        "Let me know if you'd like me to go deeper into any of these points. 🙂",
        "日本語でも説明できます。必要なら言ってください。",
        "这个方法在大多数情况下都有效，但要注意边界条件。",
        "The résumé should lead with results, not responsibilities.",
        "Zero-width joiners build family emoji like 👨‍👩‍👧‍👦 from several code points.",
        "In the end, clarity beats cleverness.",
    ]
    static let bullets = [
        "Check the logs first", "Write a failing test", "Read the error message twice",
        "Ask what changed recently", "Simplify until it works", "Document the decision",
        "Back up before migrating", "Time-box the investigation",
    ]
    static let codeSamples = [
        ("swift", """
        func fibonacci(_ n: Int) -> Int {
            var (a, b) = (0, 1)
            for _ in 0..<n { (a, b) = (b, a + b) }
            return a
        }
        """),
        ("python", """
        def chunks(items, size):
            for start in range(0, len(items), size):
                yield items[start:start + size]
        """),
        ("sql", """
        SELECT id, title FROM conversation
        WHERE (updated_at, id) < (?, ?)
        ORDER BY updated_at DESC, id DESC LIMIT 50;
        """),
        ("bash", """
        for f in *.log; do
          grep -c ERROR "$f" | sed "s|^|$f: |"
        done
        """),
        ("javascript", """
        const debounce = (fn, ms) => {
          let timer;
          return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
        };
        """),
    ]
    static let systemPrompts = [
        "You are a helpful assistant. Answer concisely.",
        "You are an expert software engineer. Prefer small, tested changes.",
        "You are a friendly tutor. Explain step by step and check understanding.",
    ]
    static let toolOutputs = [
        #"{"status": "ok", "rows": 42, "elapsed_ms": 17}"#,
        #"{"temperature_c": 21.5, "city": "Zürich", "conditions": "partly cloudy ⛅"}"#,
        "Traceback (most recent call last):\n  File \"main.py\", line 3, in <module>\nZeroDivisionError: division by zero",
        "total 24\ndrwxr-xr-x 2 user user 4096 Jan  1 12:00 .\n-rw-r--r-- 1 user user  220 Jan  1 12:00 notes.txt",
    ]
    static let models = ["gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet", "claude-3-opus", "llama-3.1-70b", "o1-preview"]
}
