// A file that uses most of what C# extraction looks at.
using System;
using System.Collections.Generic;
using Example.Store;

namespace Example.Lint
{
    /// <summary>Checks files.</summary>
    public class Linter : Base, IChecker
    {
        private readonly Store store;
        private Dictionary<string, int> cache = new Dictionary<string, int>();
        public const int Limit = 10;

        public Linter(Store store) { this.store = store; }

        public string Name { get; set; }

        public int Check(List<string> files)
        {
            var count = 0;
            foreach (var f in files)
            {
                count += Count(f);
                this.Save();
            }
            store.Flush();
            Console.WriteLine(count);
            return count;
        }

        private int Count(string f) => cache.TryGetValue(f, out var n) ? n : 0;

        public static Linter Make(Store s)
        {
            Linter l = new Linter(s);
            l.Check(new List<string> { "a" });
            var other = new Linter(Store.Open("db"));
            return other;
        }
    }

    public interface IChecker { int Check(List<string> files); }

    public enum Level { Low, High }

    public struct Pair { public int A; }

    public record Point(int X, int Y);
}
