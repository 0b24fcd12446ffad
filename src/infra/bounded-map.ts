// A Map that forgets its oldest entry once it holds `limit` entries: the worker's memos of what
// it fetched or wrote last stay bounded however many Kymas pass through it.
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.limit) this.delete(this.keys().next().value!);
    return super.set(key, value);
  }
}
