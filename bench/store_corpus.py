"""Deterministic, realistic chat text for the store benchmark: mixed English and Chinese, some code.

Invariants: the same seed yields the same text; every message carries a unique ASCII marker token
(``bq<writer>x<seq>``) so the benchmark can prove each message is findable by full-text search.
"""

from __future__ import annotations

import random

_ENGLISH_TEXT = (
    "the be to of and a in that have it for not on with he as you do at this but his by from they we say "
    "her she or an will my one all would there their what so up out if about who get which go me when make "
    "can like time no just him know take people into year your good some could them see other than then now "
    "look only come its over think also back after use two how our work first well way even new want because "
    "any these give day most us is are was were been has had did said could should might must need try help "
    "message memory session search index database server client request response error timeout retry token "
    "model prompt context summary compression gateway telegram slack discord webhook user assistant tool "
    "config deploy docker volume process thread lock queue worker latency throughput benchmark release "
    "schedule meeting tomorrow yesterday morning evening weekend project deadline review feedback question "
    "answer idea plan budget price order delivery address account password email phone number travel hotel "
    "flight train ticket dinner lunch coffee weather rain sunny cloudy running walking reading writing "
    "python function class method variable import module package install version update upgrade fix bug "
    "feature branch commit merge pull push test failing passing works broken slow fast quickly carefully"
)
_ENGLISH = tuple(_ENGLISH_TEXT.split())
_TECH_TEXT = (
    "asyncio sqlite fts5 trigram porter unicode61 bm25 websocket kubernetes postgres redis nginx systemd "
    "json yaml toml http https grpc oauth jwt utf8 base64 sha256 uuid cron ssh tls csv pandas numpy"
)
_TECH = tuple(_TECH_TEXT.split())
# Most frequent first: real Chinese text repeats words, so its trigrams repeat too.
_CHINESE_TEXT = (
    "的 了 是 在 我 有 和 就 不 人 都 一 也 很 到 说 要 去 你 会 "
    "着 没有 看 好 自己 这 那 他 她 我们 你们 他们 这个 那个 什么 "
    "怎么 为什么 因为 所以 但是 如果 已经 可以 应该 需要 知道 觉得 认为 "
    "希望 喜欢 现在 今天 明天 昨天 时候 时间 事情 问题 工作 朋友 公司 "
    "项目 一下 一起 一直 一样 还是 或者 而且 虽然 然后 其实 当然 非常 "
    "特别 比较 马上 以后 之前 最近 经常 这些 那些 哪里 这里 那里 帮忙 "
    "谢谢 不好意思 没关系 数据 系统 服务 用户 消息 记忆 搜索 模型 部署 "
    "配置 测试 代码 文件 会议 计划 进度 结果 方法 功能 版本 更新 错误 "
    "日志 性能 速度 内存 数据库 服务器 客户端 接口 请求 响应 超时 重试 "
    "压缩 索引 查询 进程 线程 队列 延迟 吞吐 发布 周末 早上 晚上 中午 "
    "吃饭 咖啡 天气 下雨 出差 酒店 机票 火车 地址 订单 价格 预算 邮件 "
    "电话 解决 处理 检查 确认 修改 删除 添加 保存 打开 关闭 开始 结束 "
    "完成 继续 等待 运行 启动 停止 重启 安装 升级 备份 恢复 迁移 同步 "
    "异步 并发 事务 提交 回滚 上线 需求 文档 设计 实现 优化 监控 告警 "
    "网络 磁盘 容器 镜像 集群 节点 负载 缓存 权限 账号 密钥 证书 域名 "
    "页面 按钮 窗口 手机 电脑 老师 学生 孩子 家人 医院 学校 城市 北京 "
    "上海 深圳 杭州 旅行 电影 音乐 运动 跑步 健身 睡觉 休息 周一 周五 "
    "下午"
)
_CHINESE = tuple(_CHINESE_TEXT.split())
_CODE = (
    "```python\nasync def {a}(store, {b}):\n    rows = await store.{c}({b}, limit={n})\n"
    "    return [r.id for r in rows]\n```",
    "```bash\n$ mnemogate {a} --{b} {n}\nerror: {c} timed out after {n} ms\n```",
    "`{a}.{b}({n})` raises `{c}Error` when the {b} is empty",
    "```sql\nSELECT {a}, count(*) FROM {b} WHERE {c} > {n} GROUP BY {a};\n```",
)


class ChatCorpus:
    """Produces chat messages of a few hundred characters with a Zipf-like word distribution."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def _zipf_index(self, size: int) -> int:
        # Log-uniform ranks: P(rank) ~ 1/rank, the Zipf shape of natural text, over the whole vocabulary.
        return min(int(size ** self._rng.random()) - 1, size - 1)

    def _english(self) -> str:
        words = [
            _ENGLISH[self._zipf_index(len(_ENGLISH))] if self._rng.random() < 0.9 else self._rng.choice(_TECH)
            for _ in range(self._rng.randint(6, 18))
        ]
        return " ".join(words).capitalize() + self._rng.choice((".", ".", "?", "!"))

    def _chinese(self) -> str:
        words = [_CHINESE[self._zipf_index(len(_CHINESE))] for _ in range(self._rng.randint(4, 16))]
        return "".join(words) + self._rng.choice(("。", "。", "？", "！", "，"))

    def _code(self) -> str:
        template = self._rng.choice(_CODE)
        pick = self._rng.choice
        return template.format(a=pick(_TECH), b=pick(_ENGLISH), c=pick(_TECH), n=self._rng.randint(1, 9999))

    def message(self, marker: str) -> str:
        """One message of roughly 150–600 characters containing ``marker`` once."""
        target = self._rng.randint(150, 600)
        parts: list[str] = []
        length = 0
        while length < target:
            roll = self._rng.random()
            part = self._english() if roll < 0.6 else self._chinese() if roll < 0.88 else self._code()
            parts.append(part)
            length += len(part) + 1
        parts.insert(self._rng.randrange(len(parts) + 1), marker)
        return " ".join(parts)


def marker(writer: int, seq: int) -> str:
    """The unique searchable token of message ``seq`` of ``writer``."""
    return f"bq{writer}x{seq}"
